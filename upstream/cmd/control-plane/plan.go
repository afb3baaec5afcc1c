package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The identities this control plane hands out. The driver's is a real ServiceAccount whose
// token the server issues (TokenRequest); the admin and the node user are static tokens.
const (
	adminUser       = "drasim-admin"
	driverNamespace = "drasim-system"
	driverAccount   = "drasim-runner"
	runnerRole      = "drasim-runner"
	clusterName     = "drasim-control-plane"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// plan is everything decided before the servers start: where files go and which tokens exist.
type plan struct {
	Dir        string // the data directory (etcd data, certificates, kubeconfigs)
	NodeName   string // the node identity (system:node:<NodeName>) a kubeconfig is written for
	AdminToken string
	NodeToken  string
}

func newPlan(dir, nodeName string) (*plan, error) {
	if dir == "" {
		return nil, fmt.Errorf("--dir: a data directory is required")
	}
	if !dnsLabel.MatchString(nodeName) {
		return nil, fmt.Errorf("--node-name %q: expected a DNS label (lower-case letters, digits, '-', at most 63)", nodeName)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--dir %q: %w", dir, err)
	}
	return &plan{Dir: abs, NodeName: nodeName, AdminToken: randomToken(), NodeToken: randomToken()}, nil
}

func randomToken() string {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(buf)
}

func (p *plan) path(parts ...string) string {
	return filepath.Join(append([]string{p.Dir}, parts...)...)
}

func (p *plan) etcdDir() string   { return p.path("etcd") }
func (p *plan) certDir() string   { return p.path("certs") }
func (p *plan) tokenFile() string { return p.path("tokens.csv") }
func (p *plan) saKeyFile() string { return p.path("certs", "service-account.key") }
func (p *plan) kubeconfig(who string) string {
	return p.path(who + ".kubeconfig")
}

// nodeUser is the user name the Node authorizer recognises for the node.
func (p *plan) nodeUser() string { return "system:node:" + p.NodeName }

// tokenFileContents is kube-apiserver's --token-auth-file: token,user,uid,"group1,group2".
func (p *plan) tokenFileContents() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s,%s,\"system:masters\"\n", p.AdminToken, adminUser, adminUser)
	fmt.Fprintf(&b, "%s,%s,%s,\"system:nodes\"\n", p.NodeToken, p.nodeUser(), p.nodeUser())
	return b.String()
}

// apiserverFlags are the kube-apiserver flags this control plane runs with.
func (p *plan) apiserverFlags(etcdURL string) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--cert-dir=" + p.certDir(),
		"--token-auth-file=" + p.tokenFile(),
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true",
		"--service-account-issuer=https://drasim-control-plane.invalid",
		"--service-account-key-file=" + p.saKeyFile(),
		"--service-account-signing-key-file=" + p.saKeyFile(),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
	}
}

// runnerRules are the permissions docs/backends.md ("RBAC") lists for a drasim run, and what
// a driver needs (reading claims, publishing its slices) is a subset of them.
func runnerRules() []rbacv1.PolicyRule {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims", "resourceclaimtemplates"}, Verbs: all},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims/status"}, Verbs: []string{"get", "update", "patch"}},
		// Since 1.36 writing status.allocation or status.reservedFor is also checked against
		// this synthetic subresource (DRAResourceClaimGranularStatusAuthorization).
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims/binding"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceslices", "deviceclasses"}, Verbs: append(append([]string{}, all...), "deletecollection")},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
	}
}

// kubeconfigFor is a kubeconfig with one cluster, one user (a bearer token) and one context.
func kubeconfigFor(server string, caPEM []byte, user, token string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = clusterName
	return cfg
}

// ready is the one JSON line printed when the control plane serves.
type ready struct {
	Server      string            `json:"server"`
	Port        int               `json:"port"`
	Etcd        string            `json:"etcd"`
	EtcdPort    int               `json:"etcdPort"`
	EtcdPeer    int               `json:"etcdPeerPort"`
	Dir         string            `json:"dir"`
	PID         int               `json:"pid"`
	Version     string            `json:"version"`
	Kubeconfigs map[string]string `json:"kubeconfigs"`
	Identities  map[string]string `json:"identities"`
}

func (p *plan) readyLine(server string, port int, etcd string, etcdPort, peerPort, pid int, version string) string {
	r := ready{
		Server: server, Port: port, Etcd: etcd, EtcdPort: etcdPort, EtcdPeer: peerPort, Dir: p.Dir, PID: pid,
		Version: version,
		Kubeconfigs: map[string]string{
			"admin":  p.kubeconfig("admin"),
			"driver": p.kubeconfig("driver"),
			"node":   p.kubeconfig("node"),
		},
		Identities: map[string]string{
			"admin":  adminUser + " (group system:masters)",
			"driver": "system:serviceaccount:" + driverNamespace + ":" + driverAccount + " (ClusterRole " + runnerRole + ")",
			"node":   p.nodeUser() + " (group system:nodes)",
		},
	}
	out, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(out)
}
