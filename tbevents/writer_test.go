package tbevents

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tbv1 "github.com/stpis/stpis/proto/tensorboard/v1"
)

// clock is a fixed time, 2023-11-14 22:13:20.25 UTC.
var clock = time.Unix(1_700_000_000, 250_000_000)

func fixed() time.Time { return clock }

func size(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestWriterFileAndEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "tb")
	w, err := Create(dir, Options{Now: fixed, Host: "box-1.lan"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "events.out.tfevents.1700000000.box-1.lan"); w.Path() != want {
		t.Errorf("path %s, want %s", w.Path(), want)
	}
	// Nothing reaches the file before Flush; Flush hands over everything.
	if n := size(t, w.Path()); n != 0 {
		t.Errorf("%d bytes on disk before Flush", n)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	afterVersion := size(t, w.Path())
	if afterVersion == 0 {
		t.Error("Flush left the file empty")
	}
	if err := w.Start(0); err != nil {
		t.Fatal(err)
	}
	if err := w.Scalars(12, []Scalar{{"train/return", 1.5}, {"eval/mean", math.NaN()}, {"eval/std", 1e300}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if size(t, w.Path()) <= afterVersion {
		t.Error("Flush did not write the scalars")
	}
	if err := w.Scalars(24, []Scalar{{"train/return", -2}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Append adds to the same file.
	a, err := Append(w.Path(), Options{Now: fixed})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Scalars(36, []Scalar{{"train/return", 3}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	evs, err := ReadEvents(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5: %v", len(evs), evs)
	}
	if evs[0].GetFileVersion() != "brain.Event:2" || evs[0].GetWallTime() != 1_700_000_000.25 {
		t.Errorf("first event %v, want the file version at the clock's time", evs[0])
	}
	if evs[1].GetSessionLog().GetStatus() != tbv1.SessionLog_START || evs[1].GetStep() != 0 {
		t.Errorf("second event %v, want a session start at step 0", evs[1])
	}
	v := evs[2].GetSummary().GetValue()
	if evs[2].GetStep() != 12 || len(v) != 3 || v[0].GetTag() != "train/return" || v[0].GetSimpleValue() != 1.5 ||
		!math.IsNaN(float64(v[1].GetSimpleValue())) || !math.IsInf(float64(v[2].GetSimpleValue()), 1) {
		t.Errorf("third event %v, want step 12 with 1.5, NaN and +Inf", evs[2])
	}
	for i, step := range []int64{24, 36} {
		if e := evs[3+i]; e.GetStep() != step || len(e.GetSummary().GetValue()) != 1 {
			t.Errorf("event %d = %v, want step %d", 3+i, e, step)
		}
	}
}

// TestCreateKeepsAnExistingFile: two files made in the same second get
// different names, the second with a suffix, and sort in order.
func TestCreateKeepsAnExistingFile(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for range 3 {
		w, err := Create(dir, Options{Now: fixed, Host: "h"})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(w.Path()))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"events.out.tfevents.1700000000.h", "events.out.tfevents.1700000000.h.1", "events.out.tfevents.1700000000.h.2"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", paths, want)
	}
}

func TestHostPart(t *testing.T) {
	for in, want := range map[string]string{"box-1.lan": "box-1.lan", "a/b c": "a_b_c", "hé": "h_", "../x": ".._x"} {
		if got := hostPart(in); got != want {
			t.Errorf("hostPart(%q) = %q, want %q", in, got, want)
		}
	}
	if got := hostPart(""); !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(got) {
		t.Errorf("hostPart of this machine = %q", got)
	}
}

// TestWriterErrors: bad input and misuse are wrapped errors, never panics.
func TestWriterErrors(t *testing.T) {
	var nilW *Writer
	for name, err := range map[string]error{
		"nil Scalars": nilW.Scalars(1, nil),
		"nil Start":   nilW.Start(1),
		"nil Flush":   nilW.Flush(),
		"nil Close":   nilW.Close(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if nilW.Path() != "" {
		t.Error("nil writer has a path")
	}

	dir := t.TempDir()
	w, err := Create(dir, Options{Now: fixed, Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Scalars(1, []Scalar{{"ok", 1}, {"", 2}}); err == nil || !strings.Contains(err.Error(), "empty tag") {
		t.Errorf("empty tag: %v", err)
	}
	if err := w.WriteEvent(nil); err == nil {
		t.Error("nil event: no error")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, errClosed) {
		t.Errorf("second Close = %v", err)
	}
	if err := w.Scalars(1, nil); !errors.Is(err, errClosed) {
		t.Errorf("Scalars after Close = %v", err)
	}
	// The empty-tag call wrote nothing: the file holds the version only.
	if evs, err := ReadEvents(w.Path()); err != nil || len(evs) != 1 {
		t.Errorf("file after a refused write: %d events, %v", len(evs), err)
	}

	// A directory that cannot be made, a file that is not an event file,
	// a file that is not there.
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("not an event file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *fs.PathError
	if _, err := Create(filepath.Join(file, "tb"), Options{}); !errors.As(err, &pe) {
		t.Errorf("Create under a file = %v, want a wrapped *fs.PathError", err)
	}
	if _, err := Create("", Options{}); err == nil {
		t.Error("Create(\"\"): no error")
	}
	if _, err := Append(file, Options{}); !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "not an event file") {
		t.Errorf("Append to a plain file = %v", err)
	}
	if _, err := Append(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Append to a missing file = %v, want fs.ErrNotExist wrapped", err)
	}
	if _, err := ReadEvents(file); err == nil {
		t.Error("ReadEvents of a plain file: no error")
	}
}

// TestWriteErrorIsSticky: once the file fails, the writer says so on every
// call and writes nothing more.
func TestWriteErrorIsSticky(t *testing.T) {
	w, err := Create(t.TempDir(), Options{Now: fixed, Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.f.Close(); err != nil { // the file goes away under the writer
		t.Fatal(err)
	}
	err = w.Flush()
	if !errors.Is(err, fs.ErrClosed) || !strings.HasPrefix(err.Error(), "tbevents: flush") {
		t.Fatalf("Flush of a closed file = %v", err)
	}
	if err2 := w.Scalars(1, []Scalar{{"x", 1}}); !errors.Is(err2, fs.ErrClosed) {
		t.Errorf("Scalars after a failed flush = %v", err2)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed flush: no error")
	}
}
