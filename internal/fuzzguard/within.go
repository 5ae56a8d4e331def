package fuzzguard

import (
	"testing"
	"time"
)

// Within runs f and fails the fuzz input when it has not returned after d
// (the fuzzer saves the input): a hang on bad input is a finding too. On
// failure f's goroutine is left running; the worker process ends.
func Within(t testing.TB, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("no answer after %v: a hang on this input", d)
	}
}
