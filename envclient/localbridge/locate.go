package localbridge

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Interpreter returns the bridge's Python interpreter and its package
// directory (bridge_py), found as Start finds them, for running the
// bridge's other modules (stpis_bridge.render) with `python -m` in dir.
func Interpreter(opts Options) (python, dir string, err error) { return resolvePaths(opts) }

// resolvePaths finds the interpreter and the working directory (see locate).
func resolvePaths(opts Options) (python, dir string, err error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		exe = "" // unknown: the working directory is still searched
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	return locate(opts, os.Getenv, exe, wd)
}

// locate finds the bridge's interpreter and directory, in this order:
//
//   - opts.Python and opts.Dir;
//   - $STPIS_BRIDGE_PYTHON and $STPIS_BRIDGE_DIR;
//   - the nearest directory at or above the executable's directory that
//     holds bridge_py/stpis_bridge (bin/trainer finds its repository);
//   - the nearest such directory at or above the working directory wd.
//
// The interpreter defaults to .venv/bin/python beside the bridge directory.
// getenv reads the environment; exe and wd may be empty when unknown. When
// nothing is found, the error is one line that says what to set.
func locate(opts Options, getenv func(string) string, exe, wd string) (python, dir string, err error) {
	python, dir = opts.Python, opts.Dir
	if python == "" {
		python = getenv(PythonEnv)
	}
	if dir == "" {
		if dir = getenv(DirEnv); dir != "" && !hasBridge(dir) {
			return "", "", fmt.Errorf("localbridge: $%s is %s, which holds no stpis_bridge package: set it to the repository's bridge_py directory", DirEnv, dir)
		}
	}
	if dir == "" {
		var searched []string
		for _, start := range []string{filepath.Dir(exe), wd} {
			if start == "" || start == "." || slices.Contains(searched, start) {
				continue
			}
			if root, ok := findUp(start, func(d string) bool { return hasBridge(filepath.Join(d, "bridge_py")) }); ok {
				dir = filepath.Join(root, "bridge_py")
				break
			}
			searched = append(searched, start)
		}
		if dir == "" {
			return "", "", fmt.Errorf("localbridge: no bridge_py/stpis_bridge at or above %s: set %s to the repository's bridge_py directory (and %s to the bridge's interpreter if it is not the .venv/bin/python beside that directory)",
				strings.Join(searched, " or "), DirEnv, PythonEnv)
		}
	} else if !hasBridge(dir) {
		return "", "", fmt.Errorf("localbridge: no stpis_bridge package in %s", dir)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", fmt.Errorf("localbridge: bridge directory: %w", err)
	}
	if python == "" {
		python = filepath.Join(filepath.Dir(dir), ".venv", "bin", "python")
	}
	if !strings.ContainsRune(python, filepath.Separator) {
		// A bare name such as python3: the PATH's.
		found, err := exec.LookPath(python)
		if err != nil {
			return "", "", fmt.Errorf("localbridge: bridge python %s not found on PATH: set %s to the interpreter that has the bridge's requirements", python, PythonEnv)
		}
		python = found
	}
	if st, err := os.Stat(python); err != nil || st.IsDir() {
		return "", "", fmt.Errorf("localbridge: bridge python not found at %s: run `make venv`, or set %s to the interpreter that has the bridge's requirements", python, PythonEnv)
	}
	if python, err = filepath.Abs(python); err != nil {
		return "", "", fmt.Errorf("localbridge: bridge python: %w", err)
	}
	return python, dir, nil
}

// hasBridge says whether dir holds the stpis_bridge package.
func hasBridge(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "stpis_bridge", "__main__.py"))
	return err == nil && !st.IsDir()
}

// findUp returns the nearest directory at or above start for which ok holds.
func findUp(start string, ok func(dir string) bool) (string, bool) {
	for d := filepath.Clean(start); ; d = filepath.Dir(d) {
		if ok(d) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// RepoRoot returns the nearest directory at or above the working directory
// that holds a go.mod file.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("localbridge: working directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("localbridge: no go.mod at or above %s", wd)
		}
	}
}
