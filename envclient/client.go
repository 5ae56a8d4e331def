package envclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/health" // registers client-side health checking, used by healthCheckConfig
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"

	envbridgev1 "github.com/stpis/stpis/proto/envbridge/v1"
)

// serviceConfig spreads calls round-robin over the replicas, skips replicas
// whose health service reports NOT_SERVING (a bridge that is shutting down or
// whose workers keep dying), and re-sends Describe, ListEnvs and Health calls
// that fail with UNAVAILABLE: up to 5 attempts in all, backing off 0.1s,
// 0.2s, 0.4s, 0.8s (±20% jitter). With round_robin a re-sent call goes to the
// next ready replica. The deadline of a call covers all its attempts.
//
// Rollout is not in it: rolloutChunk re-sends chunks itself, because gRPC's
// retry policy has no per-attempt deadline (a stopped replica would hold a
// chunk until the keepalive fires), cannot wait minutes for a restarting
// bridge, and logs nothing.
const serviceConfig = `{
  "loadBalancingConfig": [{"round_robin": {}}],
  "healthCheckConfig": {"serviceName": ""},
  "methodConfig": [{
    "name": [
      {"service": "envbridge.v1.EnvBridgeService", "method": "Describe"},
      {"service": "envbridge.v1.EnvBridgeService", "method": "ListEnvs"},
      {"service": "grpc.health.v1.Health"}
    ],
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.1s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

// manualScheme is the resolver scheme of a list of replica addresses. The
// resolver is registered per ClientConn (grpc.WithResolvers), not globally.
const manualScheme = "stpis-replicas"

// Client talks to one bridge or a set of replicas over one ClientConn. It is
// safe for concurrent use.
type Client struct {
	cfg      Config
	conn     *grpc.ClientConn
	bridge   envbridgev1.EnvBridgeServiceClient
	health   healthpb.HealthClient
	log      zerolog.Logger
	replicas int
	inFlight chan struct{}
	callOpts []grpc.CallOption
	// maxPerCall is the bridge's max episodes per call as last read after
	// a RESOURCE_EXHAUSTED (0: not read; chunks are sized without it).
	maxPerCall atomic.Int64
}

// Dial creates a Client for cfg.Target. Like grpc.NewClient it does not wait
// for a connection: it starts connecting in the background, and WaitReady
// waits for a bridge to answer. ctx bounds only the DNS lookup that counts
// the replicas of a dns:/// target.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	target, replicas, opts, err := parseTarget(ctx, cfg.Target, cfg.TLSServerName)
	if err != nil {
		return nil, err
	}
	creds, err := cfg.credentials()
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(serviceConfig),
		// Ignore service configs from DNS TXT records: ours is the contract.
		grpc.WithDisableServiceConfig(),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                cfg.KeepaliveTime,
			Timeout:             cfg.KeepaliveTimeout,
			PermitWithoutStream: cfg.KeepalivePermitWithoutStream,
		}),
		// Reconnect to a restarting bridge within about a second of its
		// return (gRPC's default backoff grows to 2 minutes), and give up on
		// a connection attempt to a stopped one after 5s.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	opts = append(opts, cfg.DialOptions...)
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("envclient: dial %q: %w", cfg.Target, err)
	}
	conn.Connect()
	maxInFlight := cfg.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = inFlightPerReplica * replicas
	}
	c := &Client{
		cfg:      cfg,
		conn:     conn,
		bridge:   envbridgev1.NewEnvBridgeServiceClient(conn),
		health:   healthpb.NewHealthClient(conn),
		log:      cfg.Logger.With().Str("component", "envclient").Str("target", cfg.Target).Logger(),
		replicas: replicas,
		inFlight: make(chan struct{}, maxInFlight),
		callOpts: []grpc.CallOption{
			grpc.MaxCallSendMsgSize(cfg.MaxMessageBytes),
			grpc.MaxCallRecvMsgSize(cfg.MaxMessageBytes),
			// A call is retried only while its request fits in the retry
			// buffer (256 KiB by default); make every chunk retryable.
			grpc.MaxRetryRPCBufferSize(cfg.MaxMessageBytes),
		},
	}
	return c, nil
}

// CheckTarget says whether target is a bridge address Dial takes: host:port,
// a comma-separated list of them (each port a number, 1..65535, each host
// without spaces or slashes), or dns:///host:port. It dials nothing, so a
// command can refuse a malformed --bridge at once rather than wait for it.
func CheckTarget(target string) error {
	target = strings.TrimSpace(target)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%q: %s; want host:port, a comma-separated list of them, or dns:///host:port", target, fmt.Sprintf(format, a...))
	}
	if target == "" {
		return bad("empty")
	}
	if strings.ContainsAny(target, " \t\n\r") {
		return bad("it holds white space")
	}
	if strings.HasPrefix(target, "dns:") {
		return nil
	}
	for i, p := range strings.Split(target, ",") {
		host, port, err := net.SplitHostPort(strings.TrimSpace(p))
		if err != nil {
			return bad("replica %d %q: %v", i, p, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("replica %d %q: port %q is not a number in 1..65535", i, p, port)
		}
		if strings.ContainsAny(host, "/?#@") {
			return bad("replica %d %q: host %q is not a host name or address (a URL's scheme or path?)", i, p, host)
		}
	}
	return nil
}

// parseTarget turns Config.Target into a gRPC target, the number of known
// replicas and the dial options its resolver needs. TLS checks each listed
// replica's certificate for serverName, or for the replica's own host when
// serverName is empty.
func parseTarget(ctx context.Context, target, serverName string) (string, int, []grpc.DialOption, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return "", 0, nil, errors.New("envclient: empty target: want host:port, a comma-separated list of them, or dns:///host:port")
	}
	if strings.HasPrefix(target, "dns:") {
		var opts []grpc.DialOption
		if serverName != "" {
			opts = append(opts, grpc.WithAuthority(serverName))
		}
		return target, countDNSReplicas(ctx, target), opts, nil
	}
	parts := strings.Split(target, ",")
	endpoints := make([]resolver.Endpoint, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		host, port, err := net.SplitHostPort(p)
		if err != nil || port == "" {
			return "", 0, nil, fmt.Errorf("envclient: target %q: replica %d %q: want host:port", target, i, p)
		}
		if host == "" {
			host = "localhost"
			p = net.JoinHostPort(host, port)
		}
		name := serverName
		if name == "" {
			name = host
		}
		endpoints = append(endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: p, ServerName: name}}})
	}
	r := manual.NewBuilderWithScheme(manualScheme)
	r.InitialState(resolver.State{Endpoints: endpoints})
	return manualScheme + ":///replicas", len(endpoints), []grpc.DialOption{grpc.WithResolvers(r)}, nil
}

// countDNSReplicas estimates how many replicas a dns:/// target has, for the
// automatic chunk size. gRPC's own dns resolver does the real resolution; a
// failed lookup here counts as one replica.
func countDNSReplicas(ctx context.Context, target string) int {
	// dns:[//authority/]host[:port]
	rest := strings.TrimPrefix(target, "dns:")
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i+1:]
		}
	}
	host := rest
	if h, _, err := net.SplitHostPort(rest); err == nil {
		host = h
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return 1
	}
	return len(addrs)
}

// Close closes the connection. Calls in flight fail with codes.Canceled.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("envclient: close: %w", err)
	}
	return nil
}

// Replicas is the number of replicas the Client knows of: the length of the
// address list, or the number of addresses a dns:/// target had at Dial.
func (c *Client) Replicas() int { return c.replicas }

// callCtx gives ctx the deadline d unless it already has an earlier one.
func callCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// Describe resolves envID (a gymnasium id or a paper alias) with kwargs and
// reports its spaces and limits.
func (c *Client) Describe(ctx context.Context, envID string, kwargs Kwargs) (EnvInfo, error) {
	if envID == "" {
		return EnvInfo{}, &SpecError{Index: -1, Field: "EnvID", Reason: "empty"}
	}
	pk, err := kwargsToProto(kwargs)
	if err != nil {
		return EnvInfo{}, err
	}
	ctx, cancel := callCtx(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, err := c.bridge.Describe(ctx, &envbridgev1.DescribeRequest{EnvId: envID, Kwargs: pk}, c.callOpts...)
	if err != nil {
		return EnvInfo{}, fmt.Errorf("envclient: describe %s: %w", Quote(envID), err)
	}
	return envInfoFromProto(resp), nil
}

// ListEnvs lists the env ids the bridge can make and the paper aliases.
func (c *Client) ListEnvs(ctx context.Context) (EnvList, error) {
	ctx, cancel := callCtx(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, err := c.bridge.ListEnvs(ctx, &envbridgev1.ListEnvsRequest{}, c.callOpts...)
	if err != nil {
		return EnvList{}, fmt.Errorf("envclient: list envs: %w", err)
	}
	aliases := make(map[string]string, len(resp.GetAliases()))
	for k, v := range resp.GetAliases() {
		aliases[k] = v
	}
	return EnvList{EnvIDs: append([]string(nil), resp.GetEnvIds()...), Aliases: aliases}, nil
}

// ErrNotServing is returned (wrapped) by Health when a bridge answers but
// does not report SERVING.
var ErrNotServing = errors.New("envclient: bridge not serving")

// Health runs one grpc.health.v1 check of the whole server on one replica
// (the next in round-robin order). It returns nil when that replica reports
// SERVING.
func (c *Client) Health(ctx context.Context) error {
	ctx, cancel := callCtx(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("envclient: health check: %w", err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%w: health status %s", ErrNotServing, s)
	}
	return nil
}

// WaitReady polls Health until a replica reports SERVING, backing off from
// 50ms to 1s between checks, for at most Config.ReadyTimeout (or until ctx
// ends, if earlier). On failure the error starts with "bridge unreachable"
// and carries the last check's error.
func (c *Client) WaitReady(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ReadyTimeout)
	defer cancel()
	backoff := 50 * time.Millisecond
	var last error
	for attempt := 1; ; attempt++ {
		// Each check waits for a connection, but not past the next poll.
		checkCtx, checkCancel := context.WithTimeout(ctx, max(backoff, time.Second))
		last = c.healthWaitForReady(checkCtx)
		checkCancel()
		if last == nil {
			c.log.Debug().Int("attempts", attempt).Dur("waited", time.Since(start)).Msg("bridge ready")
			return nil
		}
		if errors.Is(last, ErrCertificate) {
			return fmt.Errorf("bridge %s: %w", c.cfg.Target, last)
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("bridge unreachable: %s after %s and %d health checks: %w",
				c.cfg.Target, time.Since(start).Round(time.Millisecond), attempt, last)
		case <-timer.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// healthWaitForReady is Health with WaitForReady, so that a check waits for
// a connection that is still being set up instead of failing at once.
func (c *Client) healthWaitForReady(ctx context.Context) error {
	resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil {
		if ctx.Err() != nil && status.Code(err) == codes.DeadlineExceeded {
			// gRPC reports the connection's last error: a certificate
			// that failed to verify is final.
			if cerr := certificateError(err); cerr != nil {
				return cerr
			}
			// Report the connection state: it says more than a deadline.
			return fmt.Errorf("health check: no ready connection (state %s): %w", c.conn.GetState(), err)
		}
		return fmt.Errorf("health check: %w", err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%w: health status %s", ErrNotServing, s)
	}
	return nil
}
