package store_test

import (
	"reflect"
	"testing"

	"github.com/wnms/wnms/internal/store"
)

// A batch's rows become one array a column; a value of another type than
// its column's is an error, not a zero.
func TestPGColumns(t *testing.T) {
	cases := []struct {
		name  string
		rows  [][]any
		types []string
		want  []any
		err   bool
	}{
		{"integers of any width and strings", [][]any{{int64(1), 2, "a"}, {int64(3), int32(4), "b"}},
			[]string{"bigint", "bigint", "text"}, []any{[]int64{1, 3}, []int64{2, 4}, []string{"a", "b"}}, false},
		{"no rows", nil, []string{"bigint", "text"}, []any{[]int64{}, []string{}}, false},
		{"a string in an integer column", [][]any{{"1"}}, []string{"bigint"}, nil, true},
		{"an integer in a text column", [][]any{{1}}, []string{"text"}, nil, true},
		{"an unknown type", [][]any{{1.5}}, []string{"double"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := store.PGColumnsForTest(c.rows, c.types...)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want one: %v", err, c.err)
			}
			if !c.err && !reflect.DeepEqual(got, c.want) {
				t.Errorf("%#v, want %#v", got, c.want)
			}
		})
	}
}
