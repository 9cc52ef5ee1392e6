//go:build !unix

package main

// lockDataDir takes no lock where flock is not available.
func lockDataDir(dir string) (release func(), err error) { return func() {}, nil }
