// Package warm names every upstream package drasim's Go programs link, so
// that one `go build ./...` fetches and compiles them all (a cache warm-up).
package warm

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/pkg/kubelet/cm/dra"
	_ "k8s.io/kubernetes/pkg/kubelet/pluginmanager"
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)
