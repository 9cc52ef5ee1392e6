package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// sqlArgs collects the parameters of a query being built.
type sqlArgs []any

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// compileFilter turns a parsed filter into an SQL condition over the
// columns that cols names for each property. Text compares ignore case;
// contains is a LIKE with the value's wildcards escaped.
func compileFilter(c wnms.Cond, cols map[string]string, args *sqlArgs) (string, error) {
	if c.Group() {
		parts := make([]string, 0, len(c.Sub))
		for _, sub := range c.Sub {
			p, err := compileFilter(sub, cols, args)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return "(" + strings.Join(parts, " "+c.Op+" ") + ")", nil
	}
	col, ok := cols[c.Property]
	if !ok {
		return "", fmt.Errorf("filter property %q has no column", c.Property)
	}
	anyOf := func(test func(p string) string) string {
		parts := make([]string, len(c.Values))
		for i, v := range c.Values {
			parts[i] = test(args.add(v))
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	text := c.Kind == wnms.FilterText
	eq := func(p string) string {
		if text {
			return "lower(" + col + ") = lower(" + p + ")"
		}
		return col + " = " + p
	}
	like := func(p string) string {
		return "lower(" + col + ") LIKE '%' || lower(" + p + ") || '%' ESCAPE '\\'"
	}
	switch c.Op {
	case "=":
		return anyOf(eq), nil
	case "!=":
		return "NOT " + anyOf(eq), nil
	case "<", ">", "<=", ">=":
		return anyOf(func(p string) string { return col + " " + c.Op + " " + p }), nil
	case "bitwise_and":
		return anyOf(func(p string) string { return "(" + col + " & " + p + ") <> 0" }), nil
	case "contains", "notcontains":
		vals := make([]any, len(c.Values))
		for i, v := range c.Values {
			vals[i] = likeEscape(v.(string))
		}
		c.Values = vals
		if c.Op == "contains" {
			return anyOf(like), nil
		}
		return "NOT " + anyOf(like), nil
	}
	return "", fmt.Errorf("filter operator %q has no SQL", c.Op)
}

// likeEscape escapes LIKE's wildcards (with '\' as the escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
