package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stpis/stpis/envclient/localbridge"
)

// Render limits, the same as stpis_bridge.render's.
const (
	maxRenderEpisodes = 100
	maxRenderPixels   = 1920 * 1080
)

// rendered is the JSON line stpis_bridge.render prints.
type rendered struct {
	Env      string     `json:"env"`
	Resolved string     `json:"resolved,omitempty"`
	Returns  []*float64 `json:"returns"`
	Lengths  []int      `json:"lengths"`
	Frames   int        `json:"frames"`
	FPS      float64    `json:"fps"`
	Out      string     `json:"out"`
	Bytes    int64      `json:"bytes"`
}

// runRender is `trainer render --policy RUN_OR_FILE -o out.gif|out.mp4`: it
// runs the bridge's Python (stpis_bridge.render, in the venv) on this
// machine, which draws the episodes off-screen with EGL and a camera that
// follows the robot. No bridge server is involved.
func runRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trainer render")
	path := fs.String("policy", "", "a policy file (policy.json, best_policy.json) or a run directory (its best policy)")
	var out string
	fs.StringVar(&out, "o", "", "the file to write: .gif or .mp4")
	fs.StringVar(&out, "out", "", "the same as -o")
	episodes := fs.Int("episodes", 1, "episodes to render, one after the other")
	seed := fs.Uint64("seed", 0, "episode i starts from gymnasium's reset with seed SEED+i")
	size := fs.String("size", "480x360", "frame size WIDTHxHEIGHT in pixels (even numbers)")
	every := fs.Int("every", 0, "draw a frame after every N steps (0: about 30 frames per second of simulated time)")
	horizon := fs.Int("horizon", 0, "maximum episode length (0: the env's)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	both := 0
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "o" || f.Name == "out" {
			both++
		}
	})
	w, h, err := parseSize(*size)
	switch {
	case both > 1:
		return usageError{errors.New("flags -o and --out are the same: give one")}
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case *path == "":
		return usageError{errors.New("flag --policy is required")}
	case out == "":
		return usageError{errors.New("flag --o is required (out.gif or out.mp4)")}
	case !strings.EqualFold(filepath.Ext(out), ".gif") && !strings.EqualFold(filepath.Ext(out), ".mp4"):
		return usageError{fmt.Errorf("invalid value %q for flag --o: want a name ending in .gif or .mp4", out)}
	case *episodes < 1 || *episodes > maxRenderEpisodes:
		return usageError{fmt.Errorf("invalid value %d for flag --episodes: want 1..%d", *episodes, maxRenderEpisodes)}
	case err != nil:
		return usageError{fmt.Errorf("invalid value %q for flag --size: %w", *size, err)}
	case *every < 0 || *every > 1000:
		return usageError{fmt.Errorf("invalid value %d for flag --every: want 0..1000", *every)}
	case *horizon < 0 || *horizon > 100000:
		return usageError{fmt.Errorf("invalid value %d for flag --horizon: want 0..100000", *horizon)}
	case *seed > 1<<62:
		return usageError{fmt.Errorf("invalid value %d for flag --seed: want at most 2^62", *seed)}
	}
	file, pf, err := policyFile(*path)
	if err != nil {
		return err
	}
	python, dir, err := localbridge.Interpreter(localbridge.Options{})
	if err != nil {
		return err
	}
	absFile, err1 := filepath.Abs(file)
	absOut, err2 := filepath.Abs(out)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	cmd := exec.CommandContext(ctx, python, "-m", "stpis_bridge.render", "--policy", absFile, "--out", absOut,
		"--episodes", strconv.Itoa(*episodes), "--seed", strconv.FormatUint(*seed, 10),
		"--width", strconv.Itoa(w), "--height", strconv.Itoa(h), "--every", strconv.Itoa(*every), "--horizon", strconv.Itoa(*horizon))
	cmd.Dir = dir
	// PYTHONPATH's relative entries name what they name here, as for the
	// local bridge of train and eval (the render runs in the bridge's dir).
	cmd.Env = localbridge.Environ()
	// Interrupted, the render is asked to stop (SIGTERM: it removes its
	// temporary file), and killed if it has not within WaitDelay.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if os.Getenv("MUJOCO_GL") == "" {
		cmd.Env = append(cmd.Env, "MUJOCO_GL=egl")
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	runErr := cmd.Run()
	if ctx.Err() != nil {
		// A render killed before it could clean up leaves its temporary
		// file; the next render of the target removes it too.
		removeRenderTemps(absOut)
		return ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && ee.ExitCode() == exitUsage {
		return usageError{errors.New(strings.TrimSpace(strings.TrimPrefix(lastLine(se.String()), "render: ")))}
	}
	if errors.As(runErr, &ee) && ee.ExitCode() == exitFailure && strings.HasPrefix(lastLine(se.String()), "render: ") {
		// A bad policy file (the same exit as eval's) or a failed render,
		// said in one line; the output is left as it was.
		return errors.New(strings.TrimPrefix(lastLine(se.String()), "render: "))
	}
	if runErr != nil {
		return fmt.Errorf("render: %s: %w: %s", python, runErr, lastLine(se.String()))
	}
	var r rendered
	if err := json.Unmarshal([]byte(lastLine(so.String())), &r); err != nil {
		return fmt.Errorf("render: reading stpis_bridge.render's result: %w", err)
	}
	// As eval does: env is the id the policy file records (Hopper-v1),
	// resolved the gymnasium id that was made, in compact JSON.
	if r.Env != pf.EnvID {
		r.Env, r.Resolved = pf.EnvID, r.Env
	}
	if !isTerminal(stdout) {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if r.Resolved != "" {
		r.Env += " (gymnasium " + r.Resolved + ")"
	}
	var rets []string
	for i, v := range r.Returns {
		s := "non-finite"
		if v != nil {
			s = strconv.FormatFloat(*v, 'f', 1, 64)
		}
		rets = append(rets, fmt.Sprintf("%s (%d steps)", s, r.Lengths[i]))
	}
	_, err = fmt.Fprintf(stdout, "%s: %d frames at %.1f fps, %.1f MB; %s %s: returns %s\n",
		out, r.Frames, r.FPS, float64(r.Bytes)/1e6, r.Env, file, strings.Join(rets, ", "))
	return err
}

// parseSize reads WIDTHxHEIGHT.
func parseSize(v string) (w, h int, err error) {
	a, b, ok := strings.Cut(v, "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, errors.New("want WIDTHxHEIGHT, as 480x360")
	case w < 16 || h < 16 || w*h > maxRenderPixels:
		return 0, 0, fmt.Errorf("want at least 16x16 and at most %d pixels", maxRenderPixels)
	case w%2 != 0 || h%2 != 0:
		return 0, 0, errors.New("want even numbers (H.264 needs them)")
	}
	return w, h, nil
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// removeRenderTemps removes the temporary files of renders of out that
// were interrupted: .NAME.tmpXXXXXXXX.EXT beside it (stpis_bridge.render's
// names).
func removeRenderTemps(out string) {
	dir, name := filepath.Split(out)
	ext := filepath.Ext(name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + name + ".tmp"
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ext) && len(n) == len(prefix)+8+len(ext) {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}
