package main

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/namespace"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// waitReady waits until /readyz answers ok and the default namespace exists; it returns the
// server's version.
func waitReady(ctx context.Context, cfg *rest.Config, apiDone <-chan error) (string, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	deadline := time.After(3 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("interrupted while starting")
		case err := <-apiDone:
			return "", fmt.Errorf("kube-apiserver stopped while starting: %v", err)
		case <-deadline:
			return "", fmt.Errorf("kube-apiserver was not ready within 3 minutes")
		case <-tick.C:
		}
		status := 0
		client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status != 200 {
			continue
		}
		if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			continue
		}
		info, err := client.Discovery().ServerVersion()
		if err != nil {
			continue
		}
		return info.GitVersion, nil
	}
}

// startControllers runs the namespace and service account controllers until ctx ends; the
// returned channel closes when both have stopped.
func startControllers(ctx context.Context, cfg *rest.Config) (<-chan struct{}, error) {
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "drasim-control-plane-controllers"))
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	namespaces := namespace.NewNamespaceController(ctx, client, meta,
		client.Discovery().ServerPreferredNamespacedResources, factory.Core().V1().Namespaces(),
		5*time.Minute, corev1.FinalizerKubernetes)
	accounts, err := serviceaccount.NewServiceAccountsController(logger, factory.Core().V1().ServiceAccounts(),
		factory.Core().V1().Namespaces(), client, serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		finished := make(chan struct{}, 2)
		go func() { namespaces.Run(ctx, 2); finished <- struct{}{} }()
		go func() { accounts.Run(ctx, 1); finished <- struct{}{} }()
		<-finished
		<-finished
		factory.Shutdown()
	}()
	return done, nil
}

// bootstrap creates the driver's ServiceAccount with the runner's ClusterRole and returns a
// token the server issued for it.
func bootstrap(ctx context.Context, cfg *rest.Config) (string, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s: %w", what, err)
		}
		return nil
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: driverNamespace}}, metav1.CreateOptions{})
	if err := create("namespace "+driverNamespace, err); err != nil {
		return "", err
	}
	_, err = client.CoreV1().ServiceAccounts(driverNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: driverAccount}}, metav1.CreateOptions{})
	if err := create("ServiceAccount "+driverAccount, err); err != nil {
		return "", err
	}
	_, err = client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: runnerRole}, Rules: runnerRules()}, metav1.CreateOptions{})
	if err := create("ClusterRole "+runnerRole, err); err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: runnerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: runnerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: driverNamespace, Name: driverAccount}},
	}
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	if err := create("ClusterRoleBinding "+runnerRole, err); err != nil {
		return "", err
	}
	seconds := int64((7 * 24 * time.Hour).Seconds())
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	tok, err := client.CoreV1().ServiceAccounts(driverNamespace).CreateToken(ctx, driverAccount, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", driverNamespace, driverAccount, err)
	}
	return tok.Status.Token, nil
}

func writeKubeconfigs(p *plan, server string, caPEM []byte, driverToken string) error {
	users := []struct{ file, user, token string }{
		{"admin", adminUser, p.AdminToken},
		{"driver", "system:serviceaccount:" + driverNamespace + ":" + driverAccount, driverToken},
		{"node", p.nodeUser(), p.NodeToken},
	}
	for _, u := range users {
		if err := clientcmd.WriteToFile(*kubeconfigFor(server, caPEM, u.user, u.token), p.kubeconfig(u.file)); err != nil {
			return fmt.Errorf("writing %s: %w", p.kubeconfig(u.file), err)
		}
	}
	return nil
}
