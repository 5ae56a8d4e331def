package train

import "fmt"

// part is one thing that sets a run apart from its method's preset form:
// a phrase of its label and a piece of its directory's name.
type part struct{ label, dir string }

func kPart(k int) part { return part{fmt.Sprintf("K=%d", k), fmt.Sprintf("k%d", k)} }

// Named returns c with its name and label set, once, from what sets it
// apart from its preset's entry for its method and step: the method's
// display name as in the paper's Table 2 ("STP_IS adaptive", "ARS V2-t"),
// then, after commas, ", K=1", ", m=4", ", top 2", ", orthogonal basis",
// ", noise 0.05", ", rate 0.02", ", pair seeds", ", shift 0.5",
// ", restarts after 400 below 0.125", ", guard 0.5", ", paper preset"; the
// directory's variant is
// "stp_is-adaptive-k1-m4-t2-orth-n0.05-r0.02-spair-shift0.5-re400x0.125-g0.5-paper"
// in the same way. The name before the first comma is the paper's column
// it compares with. A run keeps the names it was created with (run.json,
// the checkpoint): a later change of the preset table renames no run.
func (c Config) Named() Config {
	if c.Name != "" {
		return c
	}
	label, dir := c.Method.base(c.Problem)
	for _, p := range c.parts() {
		label += ", " + p.label
		dir += "-" + p.dir
	}
	c.Name, c.Label = dir, label
	return c
}

func (c Config) parts() []part {
	ref, err := Preset(c.Preset, c.MethodName(), c.Step(), c.Problem.Env)
	if err != nil {
		// No entry to compare with: the method's own parts only.
		return c.Method.parts(c.Problem, nil)
	}
	ps := c.Method.parts(c.Problem, ref.Method)
	if ref.Problem.CommonSeeds != c.Problem.CommonSeeds {
		label := c.Problem.CommonSeeds.String() + " seeds"
		if c.Problem.CommonSeeds == OwnSeeds {
			label = "no common seeds"
		}
		ps = append(ps, part{label, "s" + c.Problem.CommonSeeds.String()})
	}
	if ref.Problem.Shift != c.Problem.Shift {
		ps = append(ps, part{fmt.Sprintf("shift %g", c.Problem.Shift), fmt.Sprintf("shift%g", c.Problem.Shift)})
	}
	if a, b := c.Problem, ref.Problem; a.HasStandingShift != b.HasStandingShift || a.StandingShift != b.StandingShift {
		label, dir := "no standing shift", "nostand"
		if a.HasStandingShift {
			label, dir = fmt.Sprintf("standing shift %g", a.StandingShift), fmt.Sprintf("stand%g", a.StandingShift)
		}
		ps = append(ps, part{label, dir})
	}
	if rs := c.Restart; rs != ref.Restart {
		label, dir := "no restarts", "norestart"
		if rs.On() {
			label, dir = fmt.Sprintf("restarts after %d below %g", rs.After, rs.Length), fmt.Sprintf("re%dx%g", rs.After, rs.Length)
			if rs.Early > 0 {
				label = fmt.Sprintf("restarts after %d below %g or %d below %g", rs.Early, rs.EarlyLength, rs.After, rs.Length)
				dir = fmt.Sprintf("re%dx%g-%dx%g", rs.Early, rs.EarlyLength, rs.After, rs.Length)
			}
		}
		ps = append(ps, part{label, dir})
	}
	if g := c.Guard; g != ref.Guard {
		label, dir := "no guard", "noguard"
		if g.On {
			label, dir = fmt.Sprintf("guard %g", g.Drop), fmt.Sprintf("g%g", g.Drop)
		}
		ps = append(ps, part{label, dir})
	}
	if c.Preset == PresetPaper {
		ps = append(ps, part{"paper preset", "paper"})
	}
	return ps
}
