#!/usr/bin/env bash
# The man pages and the bash completion are generated from the option table (src/docgen/docgen.cc):
# every flag `knee SUB --help` lists (and `knee SUB SUBSUB --help`) is in knee-SUB(1), each page
# renders with man(1) without warnings, tab completion offers subcommands, flags and enumerated
# values, and `knee --version` names the version that results record.
# usage: docs_test.sh KNEE DOC_DIR
set -euo pipefail
export LC_ALL=C  # one sort order
KNEE=$1; DOC=$2
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

# Long flags in a --help text, and in a page (roff's \- is a plain hyphen once unescaped).
help_flags() { "$KNEE" "$@" --help | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u; }
page_text() { sed 's/\\-/-/g' "$1"; }
check_page() {  # check_page PAGE CMD...: every flag of `knee CMD... --help` is in PAGE
  local page=$1; shift
  local missing
  [ -n "$(help_flags "$@")" ] || { err "knee $* --help lists no flags"; return; }
  missing=$(comm -23 <(help_flags "$@") <(page_text "$page" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u))
  [ -z "$missing" ] || err "knee $* --help lists flags missing from $(basename "$page"): $missing"
}
# The subcommands a --help lists: the indented names after "Subcommands:", up to a blank line.
subcommands() { "$KNEE" "$@" --help | awk '/^Subcommands:/{on=1; next} on && !NF {exit} on && /^  [a-z]/ {print $1}'; }
subs=$(subcommands)
[ -n "$subs" ] || err "no subcommands in knee --help"
check_page "$DOC/man/knee.1"
for s in $subs; do
  page=$DOC/man/knee-$s.1
  [ -f "$page" ] || { err "no man page for knee $s ($page)"; continue; }
  grep -q "^\.TH KNEE\\\\-$(echo "$s" | tr a-z A-Z) 1" "$page" || err "$page: no .TH line"
  check_page "$page" "$s"
  for sub in $(subcommands "$s"); do
    check_page "$page" "$s" "$sub"
    grep -q "knee $s $sub" <(page_text "$page") || err "$page: no section for knee $s $sub"
  done
  warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null || true)
  [ -z "$warnings" ] || err "man --warnings on $page: $warnings"
  [ -f "$page.gz" ] && cmp -s <(gzip -dc "$page.gz") "$page" || err "$page.gz is not $page gzipped"
done
# One page per subcommand, and no other (a page left from a subcommand that is gone).
want_pages=$( (echo knee.1; for s in $subs; do echo "knee-$s.1"; done) | sort | tr '\n' ' ')
got_pages=$(cd "$DOC/man" && ls ./*.1 | sed 's|^\./||' | sort | tr '\n' ' ')
[ "$got_pages" = "$want_pages" ] || err "man pages: got '$got_pages', want '$want_pages'"
grep -q '^knee \\- ' "$DOC/man/knee.1" || err "knee.1: NAME line is not 'knee \\- ...' (whatis)"

# Bash completion: drive _knee as bash does, with COMP_WORDS and COMP_CWORD.
completions() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _knee
           [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ "$DOC/knee.bash-completion" "$@" | sort | tr '\n' ' '
}
expect() {  # expect "WANT" WORDS...
  local want=$1; shift
  local got; got=$(completions "$@")
  [ "$got" = "$want" ] || err "completing '$*': got '$got', want '$want'"
}
expect "sweep " knee sw
expect "capacity lab ladder model probe report run serve sweep " knee ""
expect "--arrival " knee run --arr
expect "poisson uniform " knee run --arrival ""
expect "poisson " knee sweep -d 2s --arrival p
expect "least_conn random round_robin " knee lab up --balance ""
expect "data deploy down " knee lab d
expect "--state " knee lab data --st
expect "1.2 1.3 " knee run --tls ""
expect "little mm1 mmc sim usl " knee model ""
expect "fio json pgbench redis-benchmark " knee sweep --adapter ""
expect "" knee run --connections ""  # a number: nothing to offer
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
touch "$tmp/result.json"; mkdir "$tmp/state_dir"
expect "$tmp/result.json " knee run --json "$tmp/res"      # a FILE option
expect "$tmp/result.json " knee report "$tmp/res"          # FILE positionals
expect "$tmp/state_dir " knee lab data --state "$tmp/st"   # a DIR option: folders only
expect "" knee run --mix "$tmp/res"                        # not a file, though its help names one

# The version: x.y.z and the commit when built from a checkout, as results record it.
version=$("$KNEE" --version)
[[ $version =~ ^knee\ [0-9]+\.[0-9]+\.[0-9]+(\ \([0-9a-f]{12}(-dirty)?\))?$ ]] ||
  err "knee --version printed '$version'"
page_text "$DOC/man/knee.1" | grep -qF "knee ${version#knee }" || err "knee.1's footer does not name '$version'"
"$KNEE" sweep --levels 1 -d 100ms -w 0 --json "$tmp/sweep.json" > /dev/null 2>&1 ||
  err "knee sweep on the built-in lab server failed"
recorded=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"]["knee_version"])' \
  "$tmp/sweep.json" 2>/dev/null || true)
[ "knee $recorded" = "$version" ] || err "the result's host.knee_version is '$recorded', --version '$version'"

[ "$fail" -eq 0 ] && echo "PASS: man pages, completion and version agree with the option table"
exit "$fail"
