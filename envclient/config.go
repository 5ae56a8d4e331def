package envclient

import (
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
)

// Defaults used for the zero values of Config fields.
const (
	DefaultCallTimeout     = 30 * time.Second
	DefaultRolloutTimeout  = 10 * time.Minute
	DefaultReadyTimeout    = 30 * time.Second
	DefaultMaxMessageBytes = 64 << 20
	// DefaultReconnectTimeout is how long a chunk keeps retrying while no
	// replica answers (a bridge restarting) before Rollout gives up.
	DefaultReconnectTimeout = 2 * time.Minute
	// DefaultAttemptBase and DefaultAttemptPerStep derive a chunk attempt's
	// deadline from the chunk's size: base + per-step × its steps (the sum of
	// its horizons, 1000 for a horizon of 0). 500µs a step is several times a
	// MuJoCo step with the policy, for a bridge shared by a few chunks at once.
	DefaultAttemptBase    = 10 * time.Second
	DefaultAttemptPerStep = 500 * time.Microsecond
	// DefaultKeepaliveTime: the bridge permits pings every 5s (gRPC servers
	// allow one per 5 minutes by default and close the connection with
	// "too_many_pings" otherwise), so a stopped bridge is found in about
	// KeepaliveTime + KeepaliveTimeout, and its calls go to another replica.
	DefaultKeepaliveTime    = 10 * time.Second
	DefaultKeepaliveTimeout = 5 * time.Second
	// defaultHorizonSteps stands for a horizon of 0 (the env's own limit) in
	// the attempt deadline.
	defaultHorizonSteps = 1000
	// chunksPerReplica is how many chunks an automatic chunk size gives each
	// known replica: two, so a replica has the next chunk queued while it
	// returns the previous one.
	chunksPerReplica = 2
	// maxAutoChunk caps an automatic chunk size; the bridge refuses calls
	// with more than --max-episodes-per-call episodes (4096 by default).
	maxAutoChunk = 1024
	// inFlightPerReplica is the default MaxInFlight per known replica.
	inFlightPerReplica = 4
)

// Config configures a Client. The zero value of every field but Target
// means the documented default.
type Config struct {
	// Target names the bridge: "host:port", a comma-separated list of
	// "host:port" replicas ("127.0.0.1:5001,127.0.0.1:5002"), or a
	// "dns:///host:port" target whose A/AAAA records are the replicas.
	// Every replica gets one subchannel and calls are spread round-robin.
	Target string

	// CallTimeout is the deadline of each Describe, ListEnvs and Health
	// call (default 30s). A deadline already on the caller's context wins
	// when it is earlier.
	CallTimeout time.Duration
	// RolloutTimeout is the deadline of each Rollout chunk, all its attempts
	// and the waits between them included (default 10m).
	RolloutTimeout time.Duration
	// AttemptTimeout is the deadline of one attempt of a chunk: a replica
	// that has not answered by then (stopped, hung, overloaded) is given up
	// on and the chunk is sent again, normally to another replica. 0 derives
	// it from the chunk: DefaultAttemptBase + DefaultAttemptPerStep × the
	// chunk's steps (14s for 8 Hopper episodes of 1000 steps).
	AttemptTimeout time.Duration
	// ReconnectTimeout bounds how long a chunk keeps being re-sent after its
	// first failed attempt while attempts fail with UNAVAILABLE: a lone
	// bridge that restarts within it costs the run nothing (default 2m).
	// Each failed attempt is logged at warn level. Past it, Rollout fails
	// with an error wrapping ErrBridgeUnavailable. Attempts that pass their
	// deadline are bounded by RolloutTimeout instead, each deadline twice
	// the last, so that an overloaded bridge is waited for, not flooded.
	ReconnectTimeout time.Duration
	// ReadyTimeout bounds WaitReady when the context has no earlier
	// deadline (default 30s).
	ReadyTimeout time.Duration

	// ChunkSize is the number of episodes per Rollout RPC. 0 means
	// automatic: ceil(n / (2 × replicas)) for a batch of n episodes, so each
	// known replica gets about two chunks, at most 1024 episodes, then
	// lowered until a chunk's request and response fit in half of
	// MaxMessageBytes. An explicit ChunkSize is lowered for bytes too.
	ChunkSize int
	// MaxInFlight bounds the Rollout RPCs this Client has in flight at once,
	// over all concurrent Rollout calls (default 4 per known replica).
	MaxInFlight int
	// MaxMessageBytes is the largest message sent or received, set on every
	// call, and the retry buffer of a call, so that any chunk that fits can
	// be re-sent (default 64 MiB).
	MaxMessageBytes int

	// KeepaliveTime: after this long without activity on a connection the
	// client pings the server to see whether the transport is still alive
	// (default 10s; grpc-go raises values below 10s to 10s). The server must
	// permit pings this often (the bridge permits one every 5s), or it
	// closes the connection.
	KeepaliveTime time.Duration
	// KeepaliveTimeout: after a keepalive ping the client waits this long
	// for any activity before it closes the connection and fails its RPCs
	// with UNAVAILABLE, and Rollout sends their chunks to another replica
	// (default 5s).
	KeepaliveTimeout time.Duration
	// KeepalivePermitWithoutStream: when true the client pings even with no
	// RPC in flight; when false (default) idle connections are not pinged.
	KeepalivePermitWithoutStream bool

	// TLSCAFile is a PEM file of the certificates that sign the bridge's
	// (a self-signed one will do): the client then speaks TLS and checks
	// the bridge's certificate. Empty (the default) means plaintext.
	TLSCAFile string
	// TLSServerName is the name the bridge's certificate must hold; empty
	// means the host of the target.
	TLSServerName string
	// TLSCertFile and TLSKeyFile are the client's certificate and key (PEM;
	// one file holding both will do for each), presented to a bridge that
	// requires client certificates (its --tls-client-ca). They need
	// TLSCAFile.
	TLSCertFile, TLSKeyFile string

	// Logger receives debug lines for chunks and a warning for every failed
	// chunk attempt (with the replica, the status and the next step).
	// Nil means no logging.
	Logger *zerolog.Logger

	// DialOptions are appended to the client's own dial options, for tests
	// (an in-memory dialer) and tuning.
	DialOptions []grpc.DialOption
}

// withDefaults returns cfg with every zero field replaced by its default.
func (cfg Config) withDefaults() Config {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.RolloutTimeout <= 0 {
		cfg.RolloutTimeout = DefaultRolloutTimeout
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	if cfg.ReconnectTimeout <= 0 {
		cfg.ReconnectTimeout = DefaultReconnectTimeout
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.KeepaliveTime <= 0 {
		cfg.KeepaliveTime = DefaultKeepaliveTime
	}
	if cfg.KeepaliveTimeout <= 0 {
		cfg.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	if cfg.Logger == nil {
		nop := zerolog.Nop()
		cfg.Logger = &nop
	}
	return cfg
}
