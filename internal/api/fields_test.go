package api

import (
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// The selective fetch helper on its own; the profile tests drive it
// through HTTP.

func TestFieldsParse(t *testing.T) {
	known := []string{"type", "templateId", "templateName", "ssid"}
	cases := []struct {
		query string
		want  []string
		bad   string // the unknown name, if the query is refused
	}{
		{"", nil, ""},
		{"fields=", nil, ""},
		{"fields=%5B%5D", nil, ""},
		{"fields=ssid", []string{"ssid"}, ""},
		{"fields=templateName,ssid", []string{"templateName", "ssid"}, ""},
		{"fields=templateName&fields=ssid", []string{"templateName", "ssid"}, ""},
		{"fields=%5BtemplateName,ssid%5D", []string{"templateName", "ssid"}, ""},
		{"fields=%5B%22templateName%22,%20%22ssid%22%5D", []string{"templateName", "ssid"}, ""},
		{"fields=%5BtemplateName%5D&fields=ssid,templateId", []string{"templateName", "ssid", "templateId"}, ""},
		{"fields=SSID,ssid,,%20templateid%20", []string{"ssid", "templateId"}, ""},
		{"fields=type", []string{"type"}, ""},
		{"fields=ssid,password", nil, "password"},
		{"fields=ssid&fields=%5Bnope%5D", nil, "nope"},
		{"fields=%5Bssid", []string{"ssid"}, ""},
		{"fields=a%20b", nil, "a b"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
			got, err := parseFields(r, newFieldSet(known))
			if tc.bad != "" {
				e, ok := err.(*wnms.Error)
				if !ok || e.Code != wnms.SelectiveFetch || e.MoreInfo != tc.bad || httpkit.Status(e.Code) != 400 {
					t.Fatalf("error %#v, want %s naming %q", err, wnms.SelectiveFetch, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

type fieldsInner struct {
	Inner string `json:"inner"`
}

type fieldsSample struct {
	fieldsInner
	Type     string  `json:"type"`
	Name     string  `json:"name,omitempty"`
	Secret   string  `json:"-"`
	Plain    int     // no tag: named by the Go name
	Pointer  *string `json:"pointer"`
	internal int
}

func TestFieldsNamesAndSelect(t *testing.T) {
	names := jsonFieldNames(&fieldsSample{})
	if diff := cmp.Diff([]string{"inner", "type", "name", "Plain", "pointer"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	v := fieldsSample{fieldsInner: fieldsInner{"in"}, Type: "sample", Name: "n", Secret: "s", Plain: 3}
	cases := []struct {
		fields []string
		want   string
	}{
		{nil, `{"inner":"in","type":"sample","name":"n","Plain":3,"pointer":null}`},
		{[]string{}, `{"type":"sample"}`},
		{[]string{"pointer", "inner"}, `{"inner":"in","type":"sample","pointer":null}`},
		{[]string{"Plain"}, `{"type":"sample","Plain":3}`},
	}
	for _, tc := range cases {
		got, err := selectFields(v, tc.fields)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("fields %v: %s, want %s", tc.fields, got, tc.want)
		}
	}
	// An object without a type field gets only what was asked for.
	got, err := selectFields(map[string]int{"a": 1, "b": 2}, []string{"b"})
	if err != nil || string(got) != `{"b":2}` {
		t.Errorf("map: %s %v", got, err)
	}
	if _, err := selectFields([]int{1}, []string{"a"}); err == nil {
		t.Error("selecting fields of an array: no error")
	}
	each, err := selectEach([]fieldsSample{v, {Type: "other"}}, []string{"name"})
	if err != nil {
		t.Fatal(err)
	}
	if string(each[0]) != `{"type":"sample","name":"n"}` || string(each[1]) != `{"type":"other"}` {
		t.Errorf("each: %s %s", each[0], each[1])
	}
	_ = v.internal
}
