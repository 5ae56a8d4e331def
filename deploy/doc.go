// Package deploy holds no code: its tests validate the deployment files
// (docker-compose.yml at the repository root and the manifests under
// deploy/kubernetes/), since no container engine runs on our machines.
package deploy
