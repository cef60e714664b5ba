#!/bin/sh
# Builds the fuzz targets' seed corpora in fuzz/corpus/<target>/ from the
# shared test corpora (read in place, never copied into the repository)
# and from the project's own policy fixtures.
#
#   fuzz/seed.sh [CORPORA_DIR]     (default: ../shared/corpora from the
#                                   repository root)
#
# Every rules/policy seed starts with one mode byte (the targets read the
# first byte as effect/dialect or file kind), as the targets expect.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
corpora=${1:-$root/../shared/corpora}
out=$here/corpus
if [ ! -d "$corpora" ]; then
    echo "seed.sh: no corpora at $corpora" >&2
    exit 1
fi
mkdir -p "$out/rules" "$out/policy" "$out/shell" "$out/matchers" "$out/evaluate" "$out/hook"

# rules: every distinct rule string, and the odd and malformed rules; the
# mode byte cycles through the six (effect, dialect) pairs.
{
    cat "$corpora/rules.txt"
    cut -f3 "$corpora/odd-rules.tsv" | tail -n +2 | jq -r '.' 2>/dev/null || true
} | awk -v dir="$out/rules" '
    length($0) > 0 {
        f = sprintf("%s/seed-%05d", dir, NR)
        printf "%c%s", (NR % 6) + 1, $0 > f
        close(f)
    }'

# policy: the real settings files (mode byte even: settings JSON) and the
# project's tuff policy fixtures (mode byte odd: policy.toml).
n=0
for f in "$corpora"/claude-settings-files/*; do
    n=$((n + 1))
    { printf '\002'; cat "$f"; } > "$out/policy/settings-$n"
done
find "$root/tests/data" -name '*.toml' | while read -r f; do
    n=$((n + 1))
    { printf '\001'; cat "$f"; } > "$out/policy/tuff-$(echo "$f" | cksum | cut -d' ' -f1)"
done

# shell: real agent-approved commands and tldr example commands.
cat "$corpora/agent-approved-bash-commands.txt" "$corpora/tldr-commands.txt" |
    awk -v dir="$out/shell" '
    length($0) > 0 {
        f = sprintf("%s/seed-%05d", dir, NR)
        printf "%s", $0 > f
        close(f)
    }'

# matchers: the target decodes its input into rules and inputs (with
# `arbitrary`); any bytes do, and rule text gives it varied ones.
split -b 512 -a 3 "$corpora/rules.txt" "$out/matchers/seed-"

# evaluate: like matchers, any bytes decode into a policy and calls; real
# commands give the decoder varied ones.
split -b 256 -a 3 "$corpora/agent-approved-bash-commands.txt" "$out/evaluate/seed-"

# hook: hook inputs for real commands (Claude Code, Codex, Cursor's shell
# event) and real paths (Claude Code's Read and Edit, Cursor's read event);
# the first byte picks the harness. jq writes the JSON.
if command -v jq >/dev/null; then
    awk 'NR % 7 == 0' "$corpora/agent-approved-bash-commands.txt" "$corpora/tldr-commands.txt" |
        jq -Rc '{hook_event_name: "PreToolUse", cwd: "/p", session_id: "s",
                 permission_mode: "default", tool_name: "Bash", tool_input: {command: .}},
                {hook_event_name: "beforeShellExecution", cwd: "/p/src",
                 workspace_roots: ["/p"], command: .}' |
        awk -v dir="$out/hook" '{
            f = sprintf("%s/cmd-%05d", dir, NR)
            printf "%c%s", (NR % 2 == 1) ? ((NR % 4 == 1) ? 0 : 1) : 2, $0 > f
            close(f)
        }'
    awk 'NR % 20 == 0' "$corpora/paths.txt" |
        jq -Rc '{cwd: "/p", tool_name: "Read", tool_input: {file_path: .}},
                {cwd: "/p", tool_name: "Edit",
                 tool_input: {file_path: ("/p/" + .), old_string: "a", new_string: "b"}},
                {hook_event_name: "beforeReadFile", cwd: "/p", workspace_roots: ["/p"],
                 file_path: ("/p/" + .)}' |
        awk -v dir="$out/hook" '{
            f = sprintf("%s/path-%05d", dir, NR)
            printf "%c%s", (NR % 3 == 0) ? 3 : 0, $0 > f
            close(f)
        }'
else
    echo "seed.sh: no jq; the hook target gets no seeds" >&2
fi

for t in rules policy shell matchers evaluate hook; do
    echo "$t: $(ls "$out/$t" | wc -l) seeds"
done
