package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// PrintFlags are -o and its template flags. An empty or "wide" output means the table.
type PrintFlags struct {
	*genericclioptions.PrintFlags
	NoHeaders bool
	// table is whether --no-headers and -o wide apply (commands printing objects only omit them).
	table bool
}

// NewPrintFlags returns -o for a command printing objects; tables adds wide and --no-headers.
func NewPrintFlags(tables bool) *PrintFlags {
	return &PrintFlags{PrintFlags: genericclioptions.NewPrintFlags(""), table: tables}
}

// AddFlags binds -o, --template, --show-managed-fields and, for tables, --no-headers.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	f.PrintFlags.AddFlags(cmd)
	formats := f.AllowedFormats()
	if f.table {
		formats = append(formats, "wide")
		cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", false, "When using the default or wide output format, don't print headers.")
	}
	cmd.Flag("output").Usage = fmt.Sprintf("Output format. One of: (%s).", strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// Output is the -o value.
func (f *PrintFlags) Output() string { return *f.OutputFormat }

// IsTable says whether the output is a table (no -o, or -o wide).
func (f *PrintFlags) IsTable() bool {
	return f.table && (f.Output() == "" || f.Output() == "wide")
}

// Validate rejects an unknown -o before any API call.
func (f *PrintFlags) Validate() error {
	if f.IsTable() {
		return nil
	}
	if _, err := f.ToPrinter(); err != nil {
		formats := []string{"json", "yaml", "name", "jsonpath=…", "go-template=…"}
		if f.table {
			formats = append(formats, "wide")
		}
		return fmt.Errorf("unknown output format %q; use one of: %s", f.Output(), strings.Join(formats, ", "))
	}
	return nil
}

// ObjectPrinter prints objects for -o json|yaml|name|jsonpath|go-template, without managed
// fields as kubectl does, setting each typed object's apiVersion and kind from scheme.
func (f *PrintFlags) ObjectPrinter(scheme *runtime.Scheme) (printers.ResourcePrinter, error) {
	f.WithTypeSetter(scheme)
	p, err := f.ToPrinter()
	if err != nil {
		return nil, err
	}
	return &printers.OmitManagedFieldsPrinter{Delegate: p}, nil
}

// TablePrinter prints metav1.Tables; withNamespace adds the NAMESPACE column of -A.
func (f *PrintFlags) TablePrinter(withNamespace bool) printers.ResourcePrinter {
	return printers.NewTablePrinter(printers.PrintOptions{
		NoHeaders:     f.NoHeaders,
		Wide:          f.Output() == "wide",
		WithNamespace: withNamespace,
	})
}

// AsList wraps objects as kubectl get -o json prints several: a v1 List whose items carry their
// apiVersion and kind.
func AsList(objs []runtime.Object, scheme *runtime.Scheme) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""},
	}}
	for _, o := range objs {
		u, err := ToUnstructured(o, scheme)
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, *u)
	}
	return list, nil
}

// ToUnstructured converts a typed object, setting its apiVersion and kind from scheme.
func ToUnstructured(o runtime.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(o, scheme)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// PrintObject prints one object with the -o printer (create --dry-run -o yaml, get NAME -o json).
func PrintObject(p printers.ResourcePrinter, o runtime.Object, scheme *runtime.Scheme, w io.Writer) error {
	u, err := ToUnstructured(o, scheme)
	if err != nil {
		return err
	}
	return p.PrintObj(u, w)
}
