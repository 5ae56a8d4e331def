package envclient

import (
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// TestLog is a log destination that goroutines write and a test reads; it
// serves the tests of this package and of envclient_test.
type TestLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *TestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *TestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger returns a zerolog logger writing to l.
func (l *TestLog) Logger() *zerolog.Logger {
	lg := zerolog.New(l)
	return &lg
}
