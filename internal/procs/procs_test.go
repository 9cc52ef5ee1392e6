package procs

import "testing"

func TestWant(t *testing.T) {
	for _, c := range []struct {
		name               string
		env                string
		current, cpus, out int
	}{
		{"two cores", "", 2, 2, 4},
		{"one core", "", 1, 1, 4},
		{"four cores", "", 4, 4, 4},
		{"sixteen cores", "", 16, 16, 16},
		{"set by the environment", "2", 2, 2, 2},
		{"a container's CPU limit", "", 2, 8, 2},
	} {
		if got := want(c.env, c.current, c.cpus); got != c.out {
			t.Errorf("%s: want(%q, %d, %d) = %d, want %d", c.name, c.env, c.current, c.cpus, got, c.out)
		}
	}
}
