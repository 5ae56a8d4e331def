package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/stpis/stpis/envclient"
)

// maxEnvIDLen bounds --env: gymnasium's ids, and a user's module:EnvId,
// are far shorter.
const maxEnvIDLen = 256

// pyModule is a Python module name: dotted identifiers.
var pyModule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// checkEnvID refuses an --env that no bridge can resolve, before a bridge
// starts: one over maxEnvIDLen, and a module:EnvId whose module is not a
// Python module name (such as "--workers=64:X" or "-h:X", which a local
// bridge's argument parser would otherwise read as its own flags).
func checkEnvID(env string) error {
	if len(env) > maxEnvIDLen {
		return usageError{fmt.Errorf("flag --env: %s: want at most %d characters", envclient.Quote(env), maxEnvIDLen)}
	}
	if module, _, ok := strings.Cut(env, ":"); ok && !pyModule.MatchString(module) {
		return usageError{fmt.Errorf("flag --env: %s: %s is not a Python module name (want module:EnvId, such as user_envs:PointMass-v0)", envclient.Quote(env), envclient.Quote(module))}
	}
	return nil
}
