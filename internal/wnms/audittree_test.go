package wnms

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// treeFixture has what treeOf leaves to encoding/json, beside what it
// mirrors itself.
type treeFixture struct {
	Plain   string `json:"plain"`
	Omitted string `json:"omitted,omitempty"`
	NoTag   int
	Bytes   []byte            `json:"bytes"`
	Array   [3]byte           `json:"array"`
	Number  json.Number       `json:"number"`
	When    time.Time         `json:"when"`
	ByInt   map[int]string    `json:"byInt"`
	ByName  map[string]*int64 `json:"byName,omitempty"`
	Any     any               `json:"any"`
	Own     ownJSON           `json:"own"`
	Float   float64           `json:"float"`
	Small   float32           `json:"small,omitempty"`
	Skipped string            `json:"-"`
	Nested  []treeLeaf        `json:"nested"`
}

// Structs treeOf leaves to encoding/json whole.
type (
	embeddedFixture struct {
		Embedded
		Plain string `json:"plain"`
	}
	Embedded struct {
		Promoted string `json:"promoted"`
	}
	asStringFixture struct {
		AsString int    `json:"asString,string"`
		Plain    string `json:"plain"`
	}
	omitZeroFixture struct {
		When time.Time `json:"when,omitzero"`
	}
)

type treeLeaf struct {
	Name string   `json:"name"`
	Vals []uint16 `json:"vals"`
	Ptr  *bool    `json:"ptr"`
}

type ownJSON struct{ v int }

func (o ownJSON) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]int{"own": o.v}) }

// treeOf builds the tree encoding/json and a decode would, for every
// audited domain type and for the cases it leaves to encoding/json, over
// values filled at random (nil and empty lists and maps, invalid UTF-8,
// tiny, huge and not-a-number floats).
func TestTreeOfIsJSON(t *testing.T) {
	types := []any{User{}, Template{}, SNMPPolicy{}, HotspotSSIDPolicy{}, DataSources{}, Webhook{}, Location{},
		FloorLayout{}, ZoneConfig{}, APIKey{}, AP{}, CustomField{}, treeFixture{}, embeddedFixture{}, asStringFixture{}, omitZeroFixture{}, map[string]any{}, []any{},
		[]treeFixture{}, map[string]treeLeaf{}}
	r := rand.New(rand.NewPCG(1, 2))
	for _, v := range types {
		for i := range 300 {
			p := reflect.New(reflect.TypeOf(v))
			fill(r, p.Elem(), 0)
			for _, x := range []any{p.Interface(), p.Elem().Interface()} {
				got := decodeTree(x)
				var want any
				if raw, err := json.Marshal(x); err == nil {
					want, _ = decodeRaw(raw)
				}
				if !reflect.DeepEqual(got, want) {
					gb, _ := json.Marshal(got)
					wb, _ := json.Marshal(want)
					t.Fatalf("%T #%d:\n got  %s\n want %s", x, i, gb, wb)
				}
			}
		}
	}
}

var treeStrings = []string{"", "a", "ap-1", "\xff\xfe bad utf-8", "<&>", "quote \" and \\", "über", "\u2028"}

// fill sets v to a random value of its type.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 4 || r.IntN(3) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.UnixMilli(r.Int64N(1 << 42)).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(r, v.Field(i), depth+1)
		}
	case reflect.Slice:
		n := r.IntN(5) - 1
		if n < 0 || depth > 4 {
			return // nil
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(r, v.Index(i), depth+1)
		}
	case reflect.Map:
		n := r.IntN(4) - 1
		if n < 0 || depth > 4 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k, depth+1)
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if r.IntN(2) == 0 || v.NumMethod() > 0 {
			return
		}
		choices := []any{"x", r.Float64() * 1e3, int64(r.IntN(100)), true, map[string]any{"k": "v", "n": 1.5}, []any{"a", 2.0}}
		v.Set(reflect.ValueOf(choices[r.IntN(len(choices))]))
	case reflect.String:
		if v.Type() == reflect.TypeFor[json.Number]() {
			v.SetString([]string{"", "1", "2.5", "-3e7"}[r.IntN(4)])
			return
		}
		v.SetString(treeStrings[r.IntN(len(treeStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := r.Int64() >> r.IntN(64)
		if r.IntN(2) == 0 {
			x = -x
		}
		if r.IntN(4) == 0 {
			x = 0
		}
		v.SetInt(x)
		if v.Int() != x {
			v.SetInt(int64(int8(x)))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(300)))
	case reflect.Float32, reflect.Float64:
		choices := []float64{0, 1, -2.5, 1e-7, 3e21, 12.000001, r.Float64() * 100, math.NaN()}
		v.SetFloat(choices[r.IntN(len(choices))])
	}
}

// BenchmarkDiffProfile is what comparing a connection test profile before
// and after an edit of its description costs (the record of one edit).
func BenchmarkDiffProfile(b *testing.B) {
	user, pass := "u", "p"
	before := NewTemplate()
	before.TemplateID, before.TemplateName, before.SSID = 7, "lobby", "corp"
	before.Username, before.Password = &user, &pass
	before.PingDestinationServers = []string{"10.0.0.1", "example.com"}
	after := before
	after.Description = "edited"
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := Diff(&before, &after); len(c) != 1 {
			b.Fatal(c)
		}
	}
}
