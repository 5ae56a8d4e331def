package envclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrCertificate marks a TLS handshake that failed on a certificate: the
// bridge's does not verify against TLSCAFile or does not hold the name,
// or the bridge refused the client's. Waiting does not mend it, so
// WaitReady returns it at once.
var ErrCertificate = errors.New("TLS handshake failed on a certificate")

// credentials builds the transport credentials cfg asks for: plaintext
// without TLSCAFile; else TLS that checks the bridge's certificate against
// TLSCAFile and TLSServerName, presenting TLSCertFile and TLSKeyFile (a
// client certificate, for a bridge that requires one) when set.
func (cfg Config) credentials() (credentials.TransportCredentials, error) {
	switch {
	case cfg.TLSCAFile == "" && (cfg.TLSServerName != "" || cfg.TLSCertFile != "" || cfg.TLSKeyFile != ""):
		return nil, errors.New("envclient: TLSServerName, TLSCertFile and TLSKeyFile need TLSCAFile (plaintext checks no name and sends no certificate)")
	case (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == ""):
		return nil, errors.New("envclient: TLSCertFile and TLSKeyFile go together: give both or neither")
	case cfg.TLSCAFile == "":
		return insecure.NewCredentials(), nil
	}
	pem, err := os.ReadFile(cfg.TLSCAFile)
	if err != nil {
		return nil, fmt.Errorf("envclient: TLSCAFile: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("envclient: TLSCAFile %s: no PEM certificate in it", cfg.TLSCAFile)
	}
	tc := &tls.Config{RootCAs: roots, ServerName: cfg.TLSServerName, MinVersion: tls.VersionTLS12}
	if cfg.TLSCertFile != "" {
		pair, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("envclient: TLSCertFile %s and TLSKeyFile %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(tc), nil
}

// certificateError returns ErrCertificate wrapping err when err is a
// handshake that failed on a certificate, else nil.
func certificateError(err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "handshake") {
		return nil
	}
	for _, s := range []string{"x509:", "failed to verify certificate", "bad certificate", "certificate required", "unknown certificate authority"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w: %w", ErrCertificate, err)
		}
	}
	return nil
}
