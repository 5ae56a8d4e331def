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
	// DefaultKeepaliveTime matches the 5-minute minimum ping interval that
	// gRPC servers (C-core, used by the Python bridge, and grpc-go) enforce
	// by default; pinging more often gets the connection closed with
	// "too_many_pings" unless the server allows it.
	DefaultKeepaliveTime    = 5 * time.Minute
	DefaultKeepaliveTimeout = 20 * time.Second
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
	// RolloutTimeout is the deadline of each Rollout chunk RPC, all retry
	// attempts included (default 10m).
	RolloutTimeout time.Duration
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
	// (default 5m; grpc-go raises values below 10s to 10s). The server must
	// permit pings this often, or it closes the connection.
	KeepaliveTime time.Duration
	// KeepaliveTimeout: after a keepalive ping the client waits this long
	// for any activity before it closes the connection and fails its RPCs
	// with UNAVAILABLE, which the retry policy sends to another replica
	// (default 20s).
	KeepaliveTimeout time.Duration
	// KeepalivePermitWithoutStream: when true the client pings even with no
	// RPC in flight; when false (default) idle connections are not pinged.
	KeepalivePermitWithoutStream bool

	// Logger receives debug lines for chunks and warnings for failed ones.
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
