package tbevents

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	tbv1 "github.com/stpis/stpis/proto/tensorboard/v1"
)

// FileVersion is the file_version of the first event of every file.
const FileVersion = "brain.Event:2"

// filePrefix starts the name of every event file.
const filePrefix = "events.out.tfevents."

// Scalar is one tagged value of a step.
type Scalar struct {
	Tag   string
	Value float64
}

// Options adjust Create and Append; the zero value is the real clock and
// host.
type Options struct {
	// Now gives the events' wall time and the file's name; time.Now when
	// nil.
	Now func() time.Time
	// Host ends the file's name; os.Hostname when empty.
	Host string
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Writer appends events to one event file. It is not safe for concurrent
// use. Its methods return an error, never panic, on a nil or closed Writer.
type Writer struct {
	f    *os.File
	bw   *bufio.Writer
	path string
	opt  Options
	// err is the first write error: the file may end in a partial record
	// after it, so nothing more is written.
	err error
}

// errClosed is returned by a closed Writer.
var errClosed = errors.New("tbevents: writer is closed")

// Create makes dir (and its parents) and a new event file in it, named
// events.out.tfevents.<unix seconds>.<host>, and writes its file_version
// event. A file of that name already there is left alone: the new one's
// name gets a suffix .1, .2, ... (TensorBoard reads any name that holds
// "tfevents").
func Create(dir string, opt Options) (*Writer, error) {
	if dir == "" {
		return nil, errors.New("tbevents: create: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tbevents: create: %w", err)
	}
	now := opt.now()
	base := filepath.Join(dir, filePrefix+strconv.FormatInt(now.Unix(), 10)+"."+hostPart(opt.Host))
	var f *os.File
	var err error
	path := base
	for i := 1; ; i++ {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			break
		}
		path = base + "." + strconv.Itoa(i)
	}
	if err != nil {
		return nil, fmt.Errorf("tbevents: create: %w", err)
	}
	w := &Writer{f: f, bw: bufio.NewWriter(f), path: path, opt: opt}
	if err := w.WriteEvent(&tbv1.Event{WallTime: seconds(now), What: &tbv1.Event_FileVersion{FileVersion: FileVersion}}); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// Append opens an event file that Create made, to add events at its end.
// It checks that the file starts with a file_version event.
func Append(path string, opt Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("tbevents: append: %w", err)
	}
	ev, err := readEvent(f)
	if err == nil && ev.GetFileVersion() == "" {
		err = errors.New("its first event has no file_version")
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("tbevents: append to %s: not an event file: %w", path, err)
	}
	return &Writer{f: f, bw: bufio.NewWriter(f), path: path, opt: opt}, nil
}

// hostPart is host, or this machine's name, as a file name part: anything
// but letters, digits, '-', '_' and '.' becomes '_'.
func hostPart(host string) string {
	if host == "" {
		host, _ = os.Hostname()
	}
	if host == "" {
		host = "localhost"
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, host)
}

// seconds is t in seconds since the Unix epoch.
func seconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// Path is the file's path.
func (w *Writer) Path() string {
	if w == nil {
		return ""
	}
	return w.path
}

// Scalars writes values as one event of step: a Summary with a simple_value
// per tag. Tags must be non-empty; values are stored as float32, as
// TensorBoard's scalars are (a NaN or an infinity is kept as one).
func (w *Writer) Scalars(step int64, values []Scalar) error {
	if err := w.usable(); err != nil {
		return err
	}
	sum := &tbv1.Summary{Value: make([]*tbv1.Summary_Value, 0, len(values))}
	for _, v := range values {
		if v.Tag == "" {
			return fmt.Errorf("tbevents: scalar of step %d: empty tag", step)
		}
		sum.Value = append(sum.Value, &tbv1.Summary_Value{Tag: v.Tag, Value: &tbv1.Summary_Value_SimpleValue{SimpleValue: toFloat32(v.Value)}})
	}
	return w.WriteEvent(&tbv1.Event{WallTime: seconds(w.opt.now()), Step: step, What: &tbv1.Event_Summary{Summary: sum}})
}

// toFloat32 converts v, taking values beyond float32's range to its
// infinities (Go leaves that conversion to the implementation) and keeping
// NaN.
func toFloat32(v float64) float32 {
	switch {
	case v > math.MaxFloat32:
		return float32(math.Inf(1))
	case v < -math.MaxFloat32:
		return float32(math.Inf(-1))
	}
	return float32(v)
}

// Start writes a SessionLog START event at step: TensorBoard then drops the
// events of this run at step and after that it read before (TensorFlow
// writes one when a training session restarts from a checkpoint).
func (w *Writer) Start(step int64) error {
	if err := w.usable(); err != nil {
		return err
	}
	return w.WriteEvent(&tbv1.Event{WallTime: seconds(w.opt.now()), Step: step,
		What: &tbv1.Event_SessionLog{SessionLog: &tbv1.SessionLog{Status: tbv1.SessionLog_START}}})
}

// WriteEvent writes ev as one record.
func (w *Writer) WriteEvent(ev *tbv1.Event) error {
	if err := w.usable(); err != nil {
		return err
	}
	if ev == nil {
		return errors.New("tbevents: nil event")
	}
	b, err := proto.Marshal(ev)
	if err != nil {
		return fmt.Errorf("tbevents: %w", err)
	}
	if err := WriteRecord(w.bw, b); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
		return w.err
	}
	return nil
}

// usable says why w cannot write.
func (w *Writer) usable() error {
	switch {
	case w == nil:
		return errors.New("tbevents: nil writer")
	case w.bw == nil:
		return errClosed
	default:
		return w.err
	}
}

// Flush hands the buffered events to the operating system.
func (w *Writer) Flush() error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("tbevents: flush %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// Close flushes and closes the file. A second Close returns an error and
// does nothing.
func (w *Writer) Close() error {
	if w == nil {
		return errors.New("tbevents: nil writer")
	}
	if w.bw == nil {
		return errClosed
	}
	err := w.Flush()
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("tbevents: close %s: %w", w.path, cerr)
	}
	w.bw, w.f = nil, nil
	return err
}

// readEvent reads one record of r as an Event.
func readEvent(r io.Reader) (*tbv1.Event, error) {
	b, err := ReadRecord(r)
	if err != nil {
		return nil, err
	}
	ev := &tbv1.Event{}
	if err := proto.Unmarshal(b, ev); err != nil {
		return nil, fmt.Errorf("%w: event: %w", ErrCorrupt, err)
	}
	return ev, nil
}

// ReadEvents reads every event of the file at path, checking each record's
// checksums.
func ReadEvents(path string) ([]*tbv1.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tbevents: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var evs []*tbv1.Event
	for {
		ev, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, fmt.Errorf("%s: event %d: %w", path, len(evs), err)
		}
		evs = append(evs, ev)
	}
}
