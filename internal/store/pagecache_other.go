//go:build !unix

package store

import "errors"

func mapPool(int) ([]byte, error) { return nil, errors.New("no SQLite page pool on this system") }

func unmapPool([]byte) {}

func uintptrOf([]byte) uintptr { return 0 }
