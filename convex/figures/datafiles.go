package figures

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/stpis/stpis/convex"
	"github.com/stpis/stpis/convex/data"
)

// dataSource is where Figures 2-3 read their LIBSVM files: --data's one
// file, the shipped three from --data-dir, or, by default, the copies
// embedded in the binary.
type dataSource struct {
	paths    []string
	embedded bool
}

// dataFiles returns cfg's data source. Every file is checked to exist
// before any figure runs, so that a wrong --data-dir fails at once, not
// after Figure 1.
func dataFiles(cfg Config) (dataSource, error) {
	switch {
	case cfg.DataFile != "":
		return dataSource{paths: []string{cfg.DataFile}}, checkFiles([]string{cfg.DataFile}, "--data")
	case cfg.Data == "":
		return dataSource{paths: data.Shipped, embedded: true}, nil
	}
	var src dataSource
	for _, name := range data.Shipped {
		src.paths = append(src.paths, filepath.Join(cfg.Data, name))
	}
	return src, checkFiles(src.paths, "--data-dir")
}

// checkFiles says which of paths cannot be read, naming the flag: a
// missing file is a bad command line (ErrUsage); one that is there but is
// not a regular file (a FIFO, a device) or is too large is a failure. A
// FIFO is refused, not waited on.
func checkFiles(paths []string, flag string) error {
	for _, p := range paths {
		f, err := convex.OpenLIBSVMFile(p)
		if err != nil {
			hint := ""
			if flag == "--data-dir" {
				hint = " (leave --data-dir out for the copies shipped in convex/data)"
			}
			if errors.Is(err, fs.ErrNotExist) {
				return usageError{errf("%s: %w%s", flag, err, hint)}
			}
			return errf("%s: %w%s", flag, err, hint)
		}
		f.Close()
	}
	return nil
}

// read reads one of the source's files.
func (s dataSource) read(path string) (*convex.Dataset, error) {
	if !s.embedded {
		return convex.ReadLIBSVMFile(path)
	}
	f, err := data.FS.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the embedded data: %w", err)
	}
	defer f.Close()
	d, err := convex.ReadLIBSVM(f)
	if err != nil {
		return nil, fmt.Errorf("convex/data/%s: %w", path, err)
	}
	return d, nil
}
