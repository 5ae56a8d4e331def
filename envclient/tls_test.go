package envclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in dir and returns their paths.
func selfSigned(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestTLS serves the bridge with a self-signed certificate: a client that
// trusts it runs episodes, the health probe passes with --tls-ca, and a
// plaintext client or one that trusts another certificate gets nowhere.
func TestTLS(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "stpis-bridge")
	other, _ := selfSigned(t, dir, "someone-else")
	b := startBridges(t, ctx, localbridge.Options{Workers: 1, ExtraArgs: []string{"--tls-cert", cert, "--tls-key", key}})[0]

	c := dialReady(t, ctx, envclient.Config{Target: b.Addr(), TLSCAFile: cert})
	got, err := c.Rollout(ctx, linearSpecs("Hopper-v5", nil, 3, 11, 2, 7, 10))
	if err != nil || len(got) != 2 || got[0].Length != 10 {
		t.Fatalf("Rollout over TLS: %d results, %v", len(got), err)
	}
	named := dialReady(t, ctx, envclient.Config{Target: b.Addr(), TLSCAFile: cert, TLSServerName: "stpis-bridge"})
	if err := named.Health(ctx); err != nil {
		t.Errorf("Health with TLSServerName: %v", err)
	}

	for name, cfg := range map[string]envclient.Config{
		"plaintext":  {Target: b.Addr(), ReadyTimeout: 2 * time.Second},
		"other CA":   {Target: b.Addr(), ReadyTimeout: 20 * time.Second, TLSCAFile: other},
		"wrong name": {Target: b.Addr(), ReadyTimeout: 20 * time.Second, TLSCAFile: cert, TLSServerName: "evil"},
	} {
		bad, err := envclient.Dial(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: Dial: %v", name, err)
		}
		start := time.Now()
		err = bad.WaitReady(ctx)
		switch {
		case err == nil:
			t.Errorf("%s: a client that should not get through is ready", name)
		case name != "plaintext" && (!errors.Is(err, envclient.ErrCertificate) || time.Since(start) > 5*time.Second):
			// A certificate that does not verify is final: said at once,
			// not after the whole ReadyTimeout.
			t.Errorf("%s: after %s: %v; want ErrCertificate at once", name, time.Since(start), err)
		}
		_ = bad.Close()
	}
	if _, err := envclient.Dial(ctx, envclient.Config{Target: b.Addr(), TLSCAFile: filepath.Join(dir, "missing.crt")}); err == nil ||
		!strings.Contains(err.Error(), "TLSCAFile") {
		t.Errorf("a missing TLSCAFile: err = %v", err)
	}

	// The container health probe speaks TLS with --tls-ca.
	probe := healthProbe(t, ctx, b.Addr())
	if out, err := probe("--tls-ca", cert); err != nil || !strings.Contains(out, "SERVING") {
		t.Errorf("healthcheck --tls-ca: %v\n%s", err, out)
	}
	if out, err := probe(); err == nil {
		t.Errorf("healthcheck in plaintext against a TLS bridge passed:\n%s", out)
	}
}

// healthProbe runs `python -m stpis_bridge.healthcheck` against addr with
// more arguments, returning its output.
func healthProbe(t *testing.T, ctx context.Context, addr string) func(args ...string) (string, error) {
	t.Helper()
	python := os.Getenv(localbridge.PythonEnv)
	root, err := localbridge.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if python == "" {
		python = filepath.Join(root, ".venv", "bin", "python")
	}
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, python, append([]string{"-m", "stpis_bridge.healthcheck", "--addr", addr, "--timeout", "2"}, args...)...)
		cmd.Dir = filepath.Join(root, "bridge_py")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// TestMutualTLS serves the bridge with --tls-client-ca: a client with a
// certificate that CA signs runs episodes; one without, or with another
// certificate, gets nowhere.
func TestMutualTLS(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "stpis-bridge")
	client, clientKey := selfSigned(t, dir, "trainer")
	stranger, strangerKey := selfSigned(t, dir, "stranger")
	b := startBridges(t, ctx, localbridge.Options{Workers: 1, ExtraArgs: []string{"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", client}})[0]

	c := dialReady(t, ctx, envclient.Config{Target: b.Addr(), TLSCAFile: cert, TLSCertFile: client, TLSKeyFile: clientKey})
	if got, err := c.Rollout(ctx, linearSpecs("Hopper-v5", nil, 3, 11, 2, 7, 10)); err != nil || len(got) != 2 {
		t.Fatalf("Rollout over mutual TLS: %d results, %v", len(got), err)
	}
	for name, cfg := range map[string]envclient.Config{
		"no client certificate": {Target: b.Addr(), ReadyTimeout: 5 * time.Second, TLSCAFile: cert},
		"another certificate":   {Target: b.Addr(), ReadyTimeout: 5 * time.Second, TLSCAFile: cert, TLSCertFile: stranger, TLSKeyFile: strangerKey},
	} {
		bad, err := envclient.Dial(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: Dial: %v", name, err)
		}
		if err := bad.WaitReady(ctx); err == nil {
			t.Errorf("%s: a client the bridge should refuse is ready", name)
		}
		_ = bad.Close()
	}
	probe := healthProbe(t, ctx, b.Addr())
	if out, err := probe("--tls-ca", cert, "--tls-cert", client, "--tls-key", clientKey); err != nil || !strings.Contains(out, "SERVING") {
		t.Errorf("healthcheck with a client certificate: %v\n%s", err, out)
	}
	if out, err := probe("--tls-ca", cert); err == nil {
		t.Errorf("healthcheck without a client certificate passed:\n%s", out)
	}
	for name, cfg := range map[string]envclient.Config{
		"key without certificate": {Target: b.Addr(), TLSCAFile: cert, TLSKeyFile: clientKey},
		"certificate without CA":  {Target: b.Addr(), TLSCertFile: client, TLSKeyFile: clientKey},
		"server name without CA":  {Target: b.Addr(), TLSServerName: "stpis-bridge"},
	} {
		if _, err := envclient.Dial(ctx, cfg); err == nil {
			t.Errorf("%s: Dial accepted it", name)
		}
	}
}
