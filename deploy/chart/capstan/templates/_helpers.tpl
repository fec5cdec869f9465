{{/* The release's full name: the release name, with "-capstan" unless it contains it. */}}
{{- define "capstan.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "capstan.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "capstan.labels" -}}
{{ include "capstan.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "capstan.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "capstan.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* --allow-cluster-kind values: `Kind` for the core group, `Kind.group` otherwise. */}}
{{- define "capstan.clusterKinds" -}}
{{- $kinds := list -}}
{{- range .Values.clusterKinds -}}
{{- $kinds = append $kinds (ternary .kind (printf "%s.%s" .kind .group) (empty .group)) -}}
{{- end -}}
{{- join "," $kinds -}}
{{- end -}}
