package tasks

import "testing"

func TestLookupAnyVersion(t *testing.T) {
	for _, env := range []string{"Hopper", "Hopper-v1", "Hopper-v5"} {
		task, ok := Lookup(env)
		if !ok || task.Name != "Hopper" || task.K != 4 || task.Threshold != 3120 {
			t.Errorf("Lookup(%q) = %+v, %v", env, task, ok)
		}
	}
	if _, ok := Lookup("Pendulum-v1"); ok {
		t.Error("Pendulum is not a paper task")
	}
}

func TestName(t *testing.T) {
	for env, want := range map[string]string{"HalfCheetah-v1": "HalfCheetah", "Walker2d-v5": "Walker2d", "my-venv": "my-venv", "X-v": "X-v"} {
		if got := Name(env); got != want {
			t.Errorf("Name(%q) = %q, want %q", env, got, want)
		}
	}
}

func TestTable2Complete(t *testing.T) {
	for _, task := range All() {
		if task.HasThreshold != (task.Table2 != nil) {
			t.Errorf("%s: a threshold comes with Table 2 figures", task.Name)
		}
		for m := range task.Table2 {
			if Rank(task.Name) >= len(all) {
				t.Errorf("%s: no rank", task.Name)
			}
			found := false
			for _, c := range Table2Methods {
				found = found || c == m
			}
			if !found {
				t.Errorf("%s: unknown method %q", task.Name, m)
			}
		}
		if task.K < 1 || task.Budget < 1 {
			t.Errorf("%s: incomplete facts %+v", task.Name, task)
		}
	}
	if PaperK("Ant-v1") != 40 || PaperK("Pendulum-v1") != 4 {
		t.Error("PaperK")
	}
}

func TestEnvIDs(t *testing.T) {
	if PaperEnv("Hopper") != "Hopper-v1" || GymnasiumEnv("Hopper") != "Hopper-v5" {
		t.Errorf("PaperEnv, GymnasiumEnv: %s, %s", PaperEnv("Hopper"), GymnasiumEnv("Hopper"))
	}
	if Name(PaperEnv("Ant")) != "Ant" || Name(GymnasiumEnv("Ant")) != "Ant" {
		t.Error("Name does not undo PaperEnv and GymnasiumEnv")
	}
}
