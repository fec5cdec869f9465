{{- define "stand-in.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "stand-in.gitconfigSecret" -}}
{{- .Values.git.config.secretName | default (printf "%s-git-config" (include "stand-in.fullname" .)) -}}
{{- end -}}

{{- define "stand-in.gitKeySecret" -}}
{{- .Values.git.ssh.secretName | default (printf "%s-git-deploy" (include "stand-in.fullname" .)) -}}
{{- end -}}
