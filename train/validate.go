package train

// Validate checks c; errors name the field (as its flag) and the limit.
func (c Config) Validate() error {
	p, l := c.Problem, c.Limits
	switch {
	case p.Env == "":
		return bad("env", "is required")
	case c.Preset != PresetTuned && c.Preset != PresetPaper:
		return bad("preset", "%q is not one of tuned, paper", c.Preset)
	case c.Method == nil:
		return bad("method", "is required")
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
		return bad("restart", "%d must be ≥ 0 (0: never restart; past max-episodes it never fires)", c.Restart.After)
	case !(c.Restart.Length >= 0 && c.Restart.Length <= 1):
		return bad("restart", "length %v is outside [0, 1] (a fraction of the horizon)", c.Restart.Length)
	case c.Restart.On() && c.Restart.Length == 0:
		return bad("restart", "length must be > 0 with %d episodes (0 never restarts)", c.Restart.After)
	case c.Restart.Early != 0 && !(c.Restart.Early > 0 && c.Restart.Early < c.Restart.After):
		return bad("restart", "the early check's %d episodes are outside (0, %d), before the check it precedes", c.Restart.Early, c.Restart.After)
	case c.Restart.Early != 0 && !(c.Restart.EarlyLength > 0 && c.Restart.EarlyLength <= 1):
		return bad("restart", "the early check's length %v is outside (0, 1] (a fraction of the horizon)", c.Restart.EarlyLength)
	case c.Restart.Early == 0 && c.Restart.EarlyLength != 0:
		return bad("restart", "an early check's length %v needs its episodes (EARLYxLENGTH,AFTERxLENGTH)", c.Restart.EarlyLength)
	}
	return c.Method.validate(p)
}
