package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/internal/fuzzguard"
)

// Found while writing FuzzTrainFlags (whose harness must keep --config off
// device files): `--config /dev/zero` read without end, the size limit
// being checked only after the whole file was in memory, until the
// process ran out of memory. An endless file is refused at the limit.
func TestConfigFileWithoutEndIsRefusedAtTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero:", err)
	}
	fuzzguard.Within(t, 20*time.Second, func() {
		_, err := readConfigFile("/dev/zero")
		if err == nil || !strings.Contains(err.Error(), "over the limit") {
			t.Errorf("readConfigFile(/dev/zero) = %v, want the size limit", err)
		}
	})
}
