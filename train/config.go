package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/stpis/stpis/ars"
	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/tasks"
)

// Method names the optimizer a run uses.
type Method string

// The methods.
const (
	STP   Method = "stp"
	STPIS Method = "stp_is"
	ARS   Method = "ars"
)

// Step is the step-size rule of STP and STP_IS.
type Step string

// The step rules of the paper's RL table.
const (
	// Adaptive is Theorem 1's decaying α0 / (v_i √(k+1)), with IS-sqrt
	// sampling for STP_IS.
	Adaptive Step = "adaptive"
	// Fixed is Theorem 2's ε / (n v_i), with IS-L sampling for STP_IS.
	Fixed Step = "fixed"
	// Combined evaluates M directions and moves x_k along the combination
	// of the Top best (stp.Settings.Top), with points x_k ± Noise·√n·b_i/v_i
	// and a step of Rate·√n; IS-L sampling for STP_IS. Not in the paper.
	Combined Step = "combined"
)

// The tuned preset's directions per iteration and directions combined for
// the combined step; on Hopper half of each, twice the iterations, with
// restarts (HopperRestart), which reached the threshold on more
// development seeds, earlier (docs/experiments.md).
const (
	CombinedDirections = 8
	CombinedTop        = 4
	HopperDirections   = 4
	HopperTop          = 2
)

// HopperRestart is the tuned preset's restart rule on Hopper: an attempt
// whose episodes, after 300 of them, still end before 1/8 of the horizon
// (the hopper falls: the first plateau) starts afresh.
var HopperRestart = Restart{After: 300, Length: 0.125}

// Basis names the basis of STP's directions.
type Basis string

// The bases.
const (
	// Gaussian is the paper's: i.i.d. N(0,1) entries (stp.Gaussian).
	Gaussian Basis = "gaussian"
	// Orthogonal is a random orthogonal basis (stp.Orthogonal), whose
	// columns explore every direction alike.
	Orthogonal Basis = "orthogonal"
)

// Lipschitz selects how a constant is read off the surrogate.
type Lipschitz string

// The two estimates of surrogate.Model.
const (
	Global Lipschitz = "global"
	Local  Lipschitz = "local"
)

// ObsNorm is how the policy's observations are normalized.
type ObsNorm string

// The observation normalizations.
const (
	// Running standardizes observations by the running mean and std of the
	// training episodes' states (ARS V2).
	Running ObsNorm = "running"
	// None gives the policy raw observations (ARS V1).
	None ObsNorm = "none"
)

// The presets: complete configurations for what the paper leaves open.
const (
	// PresetTuned is our measured choice (docs/design.md says why).
	PresetTuned = "tuned"
	// PresetPaper follows the paper literally where it speaks.
	PresetPaper = "paper"
)

// Problem is what a run optimizes: the env, and how a point's value is
// measured from its episodes.
type Problem struct {
	// Env is a paper name (Hopper-v1) or a gymnasium id; Kwargs go to
	// gymnasium.make.
	Env    string           `json:"env"`
	Kwargs envclient.Kwargs `json:"kwargs,omitempty"`
	// Seed seeds everything random in the run.
	Seed uint64 `json:"seed"`
	// K is the number of episodes averaged per evaluated point.
	K int `json:"k"`
	// Shift is the alive-bonus shift subtracted per step from training
	// returns (never from evaluation returns).
	Shift float64 `json:"shift"`
	// Horizon caps episode length; 0 is the env's limit.
	Horizon int     `json:"horizon"`
	ObsNorm ObsNorm `json:"obs_norm"`
	// CommonSeeds is which training episodes of an iteration share their
	// seeds (their start states).
	CommonSeeds Seeds `json:"common_seeds,omitempty"`
}

// Seeds is which training episodes of an iteration run on the same seeds.
type Seeds string

// The seed sharings.
const (
	// OwnSeeds gives every training episode its own seed (ARS's rollouts).
	OwnSeeds Seeds = ""
	// IterationSeeds gives the points of an iteration the same K seeds, so
	// that all of them are compared on the same start states (what the
	// three-point rule compares).
	IterationSeeds Seeds = "iteration"
	// PairSeeds gives the two points of each antithetic pair x ± σb the
	// same K seeds and each pair its own: f(x+σb) − f(x−σb) is taken on
	// one start state, and the step averages over as many start states as
	// pairs. The pairs are points 2i and 2i+1 of a batch, the order in
	// which every optimizer here proposes them.
	PairSeeds Seeds = "pair"
)

// String names the sharing as the flag takes it.
func (s Seeds) String() string {
	if s == OwnSeeds {
		return "none"
	}
	return string(s)
}

// ParseSeeds reads a sharing: none, iteration or pair; true and false
// are iteration and none (the flag was a switch).
func ParseSeeds(v string) (Seeds, error) {
	switch v {
	case "none", "false":
		return OwnSeeds, nil
	case "iteration", "true":
		return IterationSeeds, nil
	case "pair":
		return PairSeeds, nil
	}
	return OwnSeeds, bad("common-seeds", "%q is not one of none, iteration, pair", v)
}

// UnmarshalJSON reads a sharing, or the true/false of run files written
// when common seeds were a switch.
func (s *Seeds) UnmarshalJSON(b []byte) error {
	v := string(b)
	if v != "true" && v != "false" {
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("train: common_seeds: %w", err)
		}
		if v == "" {
			*s = OwnSeeds
			return nil
		}
	}
	parsed, err := ParseSeeds(v)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// Limits are a run's budget, threshold and evaluation cadence.
type Limits struct {
	// MaxEpisodes caps the training episodes: an iteration that would
	// exceed it is not run.
	MaxEpisodes int `json:"max_episodes"`
	// Threshold is the reward threshold; HasThreshold says if there is one.
	Threshold    float64 `json:"threshold"`
	HasThreshold bool    `json:"has_threshold"`
	// StopAtThreshold ends the run at the first evaluation ≥ Threshold.
	StopAtThreshold bool `json:"stop_at_threshold"`
	// EvalEvery is the evaluation period in iterations. EvalSpacing, when
	// > 0, replaces it by a period in training episodes: the policy is
	// evaluated after the first iteration that crosses each multiple of
	// EvalSpacing, so that methods with iterations of different sizes are
	// measured at the same spacing. EvalEpisodes is the number of episodes
	// of an evaluation.
	EvalEvery    int `json:"eval_every"`
	EvalSpacing  int `json:"eval_spacing,omitempty"`
	EvalEpisodes int `json:"eval_episodes"`
}

// STPSettings configure STP and STP_IS in the RL loop. Every field is set
// by a preset; there are no implicit defaults.
type STPSettings struct {
	Step Step `json:"step"`
	// Alpha0 is α0 of the adaptive rule; Epsilon is ε of the fixed rule
	// α = ε/(n v_i), 0 meaning 0.05·n (a step of 0.05/v_i).
	Alpha0  float64 `json:"alpha0"`
	Epsilon float64 `json:"epsilon"`
	// Directions is the number of directions of one iteration (0 or 1:
	// the paper's one).
	Directions int `json:"directions,omitempty"`
	// Top is the number of directions the combined step combines
	// (stp.Settings.Top; 0 for the other steps). Noise and Rate are its
	// perturbation and step in ARS's units (ARS's directions have norm
	// ≈ √n, the basis columns 1): the points are x_k ± Noise·√n·b_i/v_i
	// and the step is Rate·√n·g, g the combination.
	Top   int     `json:"top,omitempty"`
	Noise float64 `json:"noise,omitempty"`
	Rate  float64 `json:"rate,omitempty"`
	// Basis is the basis whose columns are the directions: the paper's
	// Gaussian (the default, also when empty) or Orthogonal.
	// NormalizeBasis scales the Gaussian basis columns to unit norm (the
	// orthogonal ones have it).
	Basis          Basis `json:"basis,omitempty"`
	NormalizeBasis bool  `json:"normalize_basis"`
	// The surrogate of STP_IS: hidden width (0: by policy size, as the
	// paper), Adam steps per iteration, how L is read off it, and γ in
	// p ← (1−γ)p + γ/n.
	Width          int       `json:"width"`
	SurrogateSteps int       `json:"surrogate_steps"`
	Lipschitz      Lipschitz `json:"lipschitz"`
	Mixing         float64   `json:"mixing"`
}

// Config is one run's complete configuration.
type Config struct {
	Preset  string      `json:"preset"`
	Method  Method      `json:"method"`
	Problem Problem     `json:"problem"`
	Limits  Limits      `json:"limits"`
	STP     STPSettings `json:"stp"` // stp and stp_is
	// ARS holds ARS V2-t's settings (ars only).
	ARS ars.Settings `json:"ars"`
	// Restart is the rule that replaces an attempt still on the first
	// plateau by a fresh one (off when zero).
	Restart Restart `json:"restart,omitzero"`
}

// Surrogate settings that no preset changes: the surrogate sets p and v
// once it holds minHistory points, after each iteration.
const minHistory = 32

// Preset returns the complete configuration of preset for a problem. k is
// the K to average (0: the preset's). The threshold and budget are the
// task's (tasks.Lookup), with none and 10000 episodes for an env the paper
// does not run.
func Preset(preset string, method Method, step Step, env string, k int) (Config, error) {
	task, known := tasks.Lookup(env)
	c := Config{Preset: preset, Method: method, Problem: Problem{Env: env, K: tasks.PaperK(env), ObsNorm: Running},
		Limits: Limits{MaxEpisodes: task.Budget, Threshold: task.Threshold, HasThreshold: task.HasThreshold, StopAtThreshold: true, EvalEvery: 5, EvalEpisodes: 10}}
	if !known {
		c.Limits.MaxEpisodes = 10000
	}
	switch preset {
	case PresetTuned, PresetPaper:
	default:
		return c, bad("preset", "%q is not one of tuned, paper", preset)
	}
	// The default method and step: the paper's STP_IS adaptive under the
	// paper preset; under the tuned one the measured best for the task
	// (docs/experiments.md): STP_IS adaptive with 8 directions on Swimmer,
	// STP with the combined step elsewhere.
	swimmer := task.Name == "Swimmer"
	if method == "" {
		method = STP
		if preset == PresetPaper || swimmer {
			method = STPIS
		}
		c.Method = method
	}
	if step == "" {
		step = Combined
		if preset == PresetPaper || swimmer {
			step = Adaptive
		}
	}
	if method == ARS {
		c.Problem.K, c.Problem.Shift, c.Limits.EvalEvery = 1, task.ARSShift, 10
		c.ARS = task.ARS
		if !known {
			c.ARS = ars.Settings{StepSize: 0.02, Directions: 8, Top: 8, Noise: 0.03}
		}
		if k != 0 {
			c.Problem.K = k
		}
		return c, nil
	}
	c.STP = STPSettings{Step: step, Alpha0: 0.3, NormalizeBasis: true, SurrogateSteps: 10, Lipschitz: Global}
	if step == Combined {
		// ARS's per-task perturbation, step and shift (ARS V2-t's; an
		// unknown env gets ARS's defaults), M directions of an orthogonal
		// basis, K 1, each direction's pair on a start state of its own;
		// on Hopper all the points of an iteration on one start state,
		// half the directions and restarts, which reached the threshold
		// on more development seeds there (docs/experiments.md).
		a := task.ARS
		if !known {
			a = ars.Settings{StepSize: 0.02, Noise: 0.03}
		}
		c.Problem.K, c.Problem.CommonSeeds, c.Problem.Shift = 1, PairSeeds, task.ARSShift
		c.STP.Basis, c.STP.Directions, c.STP.Top = Orthogonal, CombinedDirections, CombinedTop
		if task.Name == "Hopper" {
			c.Problem.CommonSeeds, c.STP.Directions, c.STP.Top, c.Restart = IterationSeeds, HopperDirections, HopperTop, HopperRestart
		}
		c.STP.Noise, c.STP.Rate = a.Noise, a.StepSize
		if k != 0 {
			c.Problem.K = k
		}
		return c, nil
	}
	if preset == PresetPaper {
		// Raw N(0,1) basis columns, one Adam step per iteration, ARS's shift.
		c.Problem.Shift, c.STP.NormalizeBasis, c.STP.SurrogateSteps = task.ARSShift, false, 1
		if k != 0 {
			c.Problem.K = k
		}
		return c, nil
	}
	// The tuned choices by task, each measured (docs/experiments.md).
	switch task.Name {
	case "Swimmer":
		c.Problem.K, c.Problem.ObsNorm, c.Problem.CommonSeeds, c.STP.Alpha0, c.STP.Directions = 1, None, IterationSeeds, 2, 8
		if k > 1 {
			c.Problem.K, c.STP.Alpha0 = k, 1
		}
	case "HalfCheetah":
		c.Problem.K, c.Problem.CommonSeeds, c.STP.Lipschitz = 1, IterationSeeds, Local
		if k != 0 {
			c.Problem.K = k
		}
		if c.Problem.K == 1 {
			c.STP.Alpha0 = 1
		}
	default:
		if k != 0 {
			c.Problem.K = k
		}
	}
	return c, nil
}

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("invalid config")

func bad(field, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, a...))
}

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate checks c; errors name the field (as its flag) and the limit.
func (c Config) Validate() error {
	p, l, s := c.Problem, c.Limits, c.STP
	switch {
	case p.Env == "":
		return bad("env", "is required")
	case c.Preset != PresetTuned && c.Preset != PresetPaper:
		return bad("preset", "%q is not one of tuned, paper", c.Preset)
	case c.Method != STP && c.Method != STPIS && c.Method != ARS:
		return bad("method", "%q is not one of stp, stp_is, ars", c.Method)
	case p.K < 1 || p.K > 10000:
		return bad("k", "%d is outside [1, 10000]", p.K)
	case !finite(p.Shift):
		return bad("shift", "%v must be finite (the bridge bounds it further)", p.Shift)
	case p.Horizon < 0:
		return bad("horizon", "%d must be ≥ 0", p.Horizon)
	case p.ObsNorm != Running && p.ObsNorm != None:
		return bad("obs-norm", "%q is not one of running, none", p.ObsNorm)
	case p.CommonSeeds != OwnSeeds && p.CommonSeeds != IterationSeeds && p.CommonSeeds != PairSeeds:
		return bad("common-seeds", "%q is not one of none, iteration, pair", p.CommonSeeds)
	case l.MaxEpisodes < 1:
		return bad("max-episodes", "%d must be ≥ 1", l.MaxEpisodes)
	case l.EvalEvery < 1:
		return bad("eval-every", "%d must be ≥ 1", l.EvalEvery)
	case l.EvalSpacing < 0:
		return bad("eval-spacing", "%d must be ≥ 0 (0: evaluate every eval-every iterations)", l.EvalSpacing)
	case l.EvalEpisodes < 1 || l.EvalEpisodes > 100000:
		return bad("eval-episodes", "%d is outside [1, 100000]", l.EvalEpisodes)
	case l.HasThreshold && !finite(l.Threshold):
		return bad("threshold", "%v must be finite", l.Threshold)
	case c.Restart.After < 0:
		return bad("restart-after", "%d must be ≥ 0 (0: never restart; past max-episodes it never fires)", c.Restart.After)
	case !(c.Restart.Length >= 0 && c.Restart.Length <= 1):
		return bad("restart-length", "%v is outside [0, 1] (a fraction of the horizon)", c.Restart.Length)
	case c.Restart.On() && c.Restart.Length == 0:
		return bad("restart-length", "must be > 0 with restart-after %d (0 never restarts)", c.Restart.After)
	case c.Method == ARS:
		return nil
	case s.Step != Adaptive && s.Step != Fixed && s.Step != Combined:
		return bad("step", "%q is not one of combined, adaptive, fixed", s.Step)
	case s.Directions < 0 || s.Directions > 4096:
		return bad("directions", "%d is outside [0, 4096]", s.Directions)
	case s.Basis != "" && s.Basis != Gaussian && s.Basis != Orthogonal:
		return bad("basis", "%q is not one of gaussian, orthogonal", s.Basis)
	case s.Step == Combined && (s.Top < 1 || s.Top > max(s.Directions, 1)):
		return bad("top", "%d is outside [1, directions = %d] (the combined step)", s.Top, max(s.Directions, 1))
	case s.Step != Combined && s.Top != 0:
		return bad("top", "%d needs --step combined", s.Top)
	case s.Step == Combined && (!(s.Rate > 0) || math.IsInf(s.Rate, 0)):
		return bad("rate", "%v must be positive and finite (the combined step)", s.Rate)
	case s.Step == Combined && (!(s.Noise > 0) || math.IsInf(s.Noise, 0)):
		return bad("noise", "%v must be positive and finite (the combined step)", s.Noise)
	case !(s.Alpha0 > 0) || math.IsInf(s.Alpha0, 0):
		return bad("alpha0", "%v must be positive and finite", s.Alpha0)
	case !(s.Epsilon >= 0) || math.IsInf(s.Epsilon, 0):
		return bad("eps", "%v must be ≥ 0 and finite (0: 0.05·n)", s.Epsilon)
	case s.Width < 0 || s.Width > 4096:
		return bad("width", "%d is outside [0 (by policy size), 4096]", s.Width)
	case s.SurrogateSteps < 0 || s.SurrogateSteps > 100000:
		return bad("surrogate-steps", "%d is outside [0, 100000]", s.SurrogateSteps)
	case s.Lipschitz != Global && s.Lipschitz != Local:
		return bad("lipschitz", "%q is not one of global, local", s.Lipschitz)
	case !(s.Mixing >= 0 && s.Mixing <= 1):
		return bad("mix", "%v is outside [0, 1]", s.Mixing)
	}
	return nil
}

// OffPaperK reports whether the run averages a K other than its method's
// usual one: the paper's for its task (STP methods), 1 (ARS and the
// combined step).
func (c Config) OffPaperK() bool {
	if c.Method == ARS || c.STP.Step == Combined {
		return c.Problem.K != 1
	}
	return c.Problem.K != tasks.PaperK(c.Problem.Env)
}

// Label is the method's display name, as in the paper's Table 2 ("STP_IS
// adaptive", "ARS V2-t"), then what sets the run apart
// from the paper's method, after a comma: ", K=1", ", m=4", ", top 2",
// ", orthogonal basis", ", pair seeds", ", shift 0.5", ", rate 0.02",
// ", restarts after 400 below 0.125", ", paper preset".
// The name before the first comma is the paper's column it compares with.
func (c Config) Label() string {
	name, _ := c.base()
	for _, p := range c.parts() {
		name += ", " + p.label
	}
	return name
}

// Variant names the run's directory: the method and its step rule
// ("stp-combined", "stp_is-adaptive", "ars", "ars-v1" on raw
// observations), then what sets it apart, as Label ("-k1", "-m4", "-t2",
// "-orth", "-spair", "-shift0.5", "-n0.05", "-r0.02", "-re400x0.125",
// "-paper"), so that different runs never share a directory.
func (c Config) Variant() string {
	_, v := c.base()
	for _, p := range c.parts() {
		v += "-" + p.dir
	}
	return v
}

// base names the method and its step rule, for Label and for Variant.
func (c Config) base() (label, dir string) {
	m, step := string(c.Method), string(c.STP.Step)
	switch {
	case c.Method == ARS && c.Problem.ObsNorm == None:
		return "ARS V1-t", "ars-v1"
	case c.Method == ARS:
		return "ARS V2-t", "ars"
	}
	return strings.ToUpper(m) + " " + step, m + "-" + step
}

// part is one thing that sets a run apart from its method's paper form.
type part struct{ label, dir string }

func (c Config) parts() []part {
	var ps []part
	if c.OffPaperK() {
		ps = append(ps, part{fmt.Sprintf("K=%d", c.Problem.K), fmt.Sprintf("k%d", c.Problem.K)})
	}
	s := c.STP
	comb := c.Method != ARS && s.Step == Combined
	// The preset the rest is measured against: the combined step's M and
	// Top, the seed sharing, shift, noise, rate and restarts are named
	// where they are not the preset's.
	d, err := Preset(c.Preset, c.Method, s.Step, c.Problem.Env, c.Problem.K)
	hasPreset := err == nil
	if c.Method != ARS && s.Directions > 1 && (!comb || !hasPreset || s.Directions != d.STP.Directions) {
		ps = append(ps, part{fmt.Sprintf("m=%d", s.Directions), fmt.Sprintf("m%d", s.Directions)})
	}
	if comb && (!hasPreset || s.Top != d.STP.Top) {
		ps = append(ps, part{fmt.Sprintf("top %d", s.Top), fmt.Sprintf("t%d", s.Top)})
	}
	// The basis when it is not the step's usual one.
	switch orth := s.Basis == Orthogonal; {
	case c.Method == ARS || orth == comb:
	case orth:
		ps = append(ps, part{"orthogonal basis", "orth"})
	default:
		ps = append(ps, part{"Gaussian basis", "gauss"})
	}
	if hasPreset {
		if d.Problem.CommonSeeds != c.Problem.CommonSeeds {
			label := c.Problem.CommonSeeds.String() + " seeds"
			if c.Problem.CommonSeeds == OwnSeeds {
				label = "no common seeds"
			}
			ps = append(ps, part{label, "s" + c.Problem.CommonSeeds.String()})
		}
		if d.Problem.Shift != c.Problem.Shift {
			ps = append(ps, part{fmt.Sprintf("shift %g", c.Problem.Shift), fmt.Sprintf("shift%g", c.Problem.Shift)})
		}
		if comb && d.STP.Noise != s.Noise {
			ps = append(ps, part{fmt.Sprintf("noise %g", s.Noise), fmt.Sprintf("n%g", s.Noise)})
		}
		if comb && d.STP.Rate != s.Rate {
			ps = append(ps, part{fmt.Sprintf("rate %g", s.Rate), fmt.Sprintf("r%g", s.Rate)})
		}
		if rs := c.Restart; rs != d.Restart {
			label := "no restarts"
			if rs.On() {
				label = fmt.Sprintf("restarts after %d below %g", rs.After, rs.Length)
			}
			ps = append(ps, part{label, restartDir(rs)})
		}
	}
	if c.Preset == PresetPaper {
		ps = append(ps, part{"paper preset", "paper"})
	}
	return ps
}

// restartDir names a restart rule in a run directory's variant.
func restartDir(r Restart) string {
	if !r.On() {
		return "norestart"
	}
	return fmt.Sprintf("re%dx%g", r.After, r.Length)
}
