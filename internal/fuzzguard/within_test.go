package fuzzguard

import (
	"testing"
	"time"
)

// A function that returns passes; one that blocks fails the test.
func TestWithin(t *testing.T) {
	ran := false
	Within(t, time.Second, func() { ran = true })
	if !ran {
		t.Fatal("f did not run")
	}
	ft := &fakeTB{TB: t}
	block := make(chan struct{})
	defer close(block)
	func() {
		defer func() { _ = recover() }()
		Within(ft, 10*time.Millisecond, func() { <-block })
	}()
	if !ft.failed {
		t.Fatal("a function that never returned passed")
	}
}

// fakeTB records Fatalf instead of stopping the test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
