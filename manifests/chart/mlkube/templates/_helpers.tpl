{{/*
Labels Helm charts carry on every object: which chart and release made it. make chart-check leaves
them out when it compares the chart with manifests/install.yaml. Selectors and pod labels stay
those of the bundle (app.kubernetes.io/name and component): a selector cannot change on upgrade.
*/}}
{{- define "mlkube.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/*
An image reference from {registry, repository, tag, digest}: the tag defaults to the chart's
appVersion; a digest (sha256:...) pins the image, as a release's bundle does.
Call with (dict "image" .Values.manager.image "root" $).
*/}}
{{- define "mlkube.image" -}}
{{- $repo := .image.repository }}
{{- with .image.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end }}
{{- $ref := printf "%s:%s" $repo (default .root.Chart.AppVersion .image.tag) }}
{{- with .image.digest }}{{ $ref = printf "%s@%s" $ref . }}{{ end }}
{{- $ref }}
{{- end }}

{{/*
The node agent's namespace: fixed, because the manager looks for the agents there.
*/}}
{{- define "mlkube.agentNamespace" -}}mlkube-datapath{{- end }}
