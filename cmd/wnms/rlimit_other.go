//go:build !unix

package main

// connBudget is the default connection cap of a listener.
func connBudget() int { return 1024 }
