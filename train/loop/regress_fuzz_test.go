package loop

import (
	"strings"
	"testing"
)

// The checkpoints FuzzRestore starts from restore: the fuzzer mutates
// real states, not states refused at once.
func TestRestoreFuzzSeedsRestore(t *testing.T) {
	for i, b := range restoreSeeds(t) {
		if _, err := Restore(b); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// Found by FuzzRestore: a checkpoint whose env claims a 2×3e9 policy
// crashed the process out of memory (fatal, not even a panic) while the
// run was allocated, before anything was validated. It is refused, naming
// the dimensions, as is a policy whose weights overflow int.
func TestRestoreRefusesAPolicyTooLargeToAllocate(t *testing.T) {
	blob := restoreSeeds(t)[0]
	for _, dims := range [][2]string{
		{`"ObsDim":3`, `"ObsDim":3000000000`},
		{`"ActDim":2`, `"ActDim":4611686018427387904`},
		{`"ObsDim":3`, `"ObsDim":-3`},
	} {
		b := strings.Replace(string(blob), dims[0], dims[1], 1)
		if b == string(blob) {
			t.Fatalf("the state has no %s", dims[0])
		}
		_, err := Restore([]byte(b))
		if err == nil || !strings.Contains(err.Error(), "policy") || !strings.Contains(err.Error(), "weights") {
			t.Errorf("%s: err = %v, want one naming the policy's size", dims[1], err)
		}
	}
}
