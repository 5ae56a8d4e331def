// Package envclient is the Go client of the MuJoCo bridge (the Python
// envbridge.v1.EnvBridgeService in bridge_py/).
//
// It turns plain Go values (EpisodeSpec, EpisodeResult, EnvInfo) into
// Rollout, Describe and ListEnvs calls, and hides everything about the wire:
// replicas, load balancing, chunking, retries and deadlines. No protobuf or
// generated type appears in its exported API.
//
// # Replicas, chunking and failover
//
// Config.Target names one bridge or several replicas (a comma-separated list
// of host:port, or a dns:/// target). All replicas share one gRPC
// ClientConn with the round_robin load-balancing policy. Client.Rollout
// splits a batch into chunks, sends the chunks concurrently (each chunk is a
// Rollout RPC, so successive chunks land on successive replicas) and writes
// each chunk's results into the slot of that chunk, so results always come
// back in request order, exactly once each.
//
// Describe, ListEnvs and Health are retried by the gRPC service config (up
// to 5 attempts on UNAVAILABLE). Rollout chunks are re-sent by the client
// itself, because they need what the service config cannot give: a chunk
// attempt has a deadline derived from its size (Config.AttemptTimeout), so a
// stopped or hung replica costs seconds, not the 5-minute keepalive; an
// attempt that fails with UNAVAILABLE or passes that deadline is re-sent with
// backoff (0.1s doubling to 2s), normally to another replica, and logged at
// warn level; an attempt after one that passed its deadline gets twice that
// deadline (an overloaded bridge answers late, and re-sending on the same
// deadline would only add to its queue), up to Config.RolloutTimeout; and a
// lone bridge that restarts is waited for, up to Config.ReconnectTimeout
// (then the error wraps ErrBridgeUnavailable). An
// episode carries its seed, so a re-sent chunk gives bit-identical results.
// Any other status (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, ...)
// fails the whole Rollout; the status is kept in the wrapped error, so
// status.Code(err) and errors.As work on it.
//
// # Imports
//
// envclient imports only the generated proto package of this module
// (proto/envbridge/v1); it must not import policy, stp, surrogate or
// cmd/trainer. The subpackage localbridge starts a local Python bridge as a
// subprocess for tests and for the trainer.
package envclient
