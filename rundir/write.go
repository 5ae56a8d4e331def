package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stpis/stpis/internal/seal"
)

// The modes of the files a run writes (before the umask). Every file but
// the checkpoint is readable by all: a trainer in a container writes as
// root, and the host user reads its results, curve and policies.
const (
	filePerm = 0o644
	// checkpointPerm keeps checkpoint.json private to its owner: it is the
	// trainer's own state for --resume (the optimizer's internals and the
	// random generator's state, behind a checksum), not a result, and no
	// reader of a run (table, plot, eval) opens it.
	checkpointPerm = 0o600
)

// writeAtomic writes b to path, with mode perm less the umask, through a
// temporary file in the same directory and a rename, so a crash never
// leaves a half-written file.
func writeAtomic(path string, b []byte, perm fs.FileMode) error {
	tmp, err := createTemp(path, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new file .<base>.tmp<random> next to path with mode
// perm less the umask (os.CreateTemp always uses 0600).
func createTemp(path string, perm fs.FileMode) (*os.File, error) {
	prefix := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(prefix+hex.EncodeToString(r[:]), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return f, err
		}
	}
}

// writeSealed writes v, indented and sealed (its last field, sha256,
// empty in v), to path atomically, readable by all.
func writeSealed(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		b, err = seal.Seal(append(b, '\n'))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeAtomic(path, b, filePerm)
}
