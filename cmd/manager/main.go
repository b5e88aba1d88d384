// Command manager runs mlkube's controller manager: the MxJob and Transform admission webhooks
// (with certificates from cert-controller) and, as they are added, the controllers.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/manager"
	"github.com/mlkube/mlkube/internal/version"
)

func main() {
	opts := manager.DefaultOptions()
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		opts.Namespace = ns
	}
	var extraNames string
	flag.StringVar(&opts.Namespace, "namespace", opts.Namespace, "namespace of the certificate Secret and the leader election lease (default: $POD_NAMESPACE)")
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", opts.MetricsAddr, "address of the metrics endpoint; 0 disables it")
	flag.BoolVar(&opts.SecureMetrics, "metrics-secure", opts.SecureMetrics, "serve metrics over HTTPS with authentication and authorization")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", opts.ProbeAddr, "address of /healthz and /readyz")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", opts.LeaderElection, "elect a leader among replicas before running controllers")
	flag.IntVar(&opts.WebhookPort, "webhook-port", opts.WebhookPort, "port of the webhook server")
	flag.DurationVar(&opts.WebhookDrain, "webhook-drain", opts.WebhookDrain, "after SIGTERM, how long the webhook server goes on answering, closing each connection, before it stops")
	flag.StringVar(&opts.CertDir, "cert-dir", opts.CertDir, "directory the webhook serving certificate is written to and read from")
	flag.StringVar(&opts.CertSecret, "cert-secret", opts.CertSecret, "Secret holding the webhook CA and serving certificate")
	flag.StringVar(&opts.WebhookService, "webhook-service", opts.WebhookService, "Service in front of the webhook server (names the certificate)")
	flag.StringVar(&opts.MutatingWebhook, "mutating-webhook-configuration", opts.MutatingWebhook, "MutatingWebhookConfiguration that receives the CA bundle")
	flag.StringVar(&opts.ValidatingWebhook, "validating-webhook-configuration", opts.ValidatingWebhook, "ValidatingWebhookConfiguration that receives the CA bundle")
	qps := flag.Float64("kube-api-qps", float64(opts.QPS), "queries per second to the API server")
	flag.IntVar(&opts.Burst, "kube-api-burst", opts.Burst, "burst of queries to the API server")
	flag.IntVar(&opts.MxJobWorkers, "mxjob-workers", opts.MxJobWorkers, "MxJobs reconciled at once")
	flag.StringVar(&opts.DatapathTokenFile, "datapath-token-file", opts.DatapathTokenFile, "projected ServiceAccount token (audience mlkube-datapath) presented to the node agents; empty sends none")
	flag.DurationVar(&opts.RunPoll, "transformrun-poll-interval", opts.RunPoll, "how often a running TransformRun's node agents are asked how its shares go")
	flag.DurationVar(&opts.RunAgentGrace, "transformrun-agent-grace", opts.RunAgentGrace, "how long a node's agent may be unreachable before its share of a TransformRun fails")
	bindImageFlags(flag.CommandLine, &opts.PodImages)
	flag.StringVar(&extraNames, "extra-cert-dns-names", "", "comma-separated further DNS names of the serving certificate")
	showVersion := flag.Bool("version", false, "print the version and exit")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String("manager"))
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	opts.QPS = float32(*qps)
	if extraNames != "" {
		opts.ExtraCertDNSNames = strings.Split(extraNames, ",")
	}

	log := ctrl.Log.WithName("setup")
	mgr, err := manager.New(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		log.Error(err, "unable to set up the manager")
		os.Exit(1)
	}
	log.Info("starting the manager", "version", version.Get(), "namespace", opts.Namespace)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "the manager stopped with an error")
		os.Exit(1)
	}
}

// bindImageFlags adds the flags that replace the images transformer pods run: a release pins its
// own (hack/release renders them into its install.yaml); unset, pods run the development images
// `make images` builds.
func bindImageFlags(fs *flag.FlagSet, images *wire.PodImages) {
	fs.Func("io-shim-image", "image of the io shim, the init container of io transformers (default "+images.IOShim+")", images.SetIOShim)
	fs.Func("code-runtime-image", fmt.Sprintf("RUNTIME=IMAGE: the image code transformers of RUNTIME run, repeatable (default %s)", runtimeImages(*images)),
		images.SetCodeRuntime)
}

// runtimeImages lists images' code runtimes as RUNTIME=IMAGE, sorted by runtime.
func runtimeImages(images wire.PodImages) string {
	var list []string
	for _, rt := range wire.CodeRuntimeNames() {
		list = append(list, rt+"="+images.CodeRuntimes[rt])
	}
	return strings.Join(list, ",")
}
