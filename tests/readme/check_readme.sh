#!/usr/bin/env bash
# The README's promises, checked (issue 14). Registered from tests/CMakeLists.txt:
#
#   check_readme.sh paths    <source dir>
#     Every repository path README.md mentions exists: paths under examples/, include/, tests/,
#     bench/, cmake/ and .ci/, every header named in it (include/labeldp/<name>, or a header of
#     that name anywhere under include/labeldp), the result files named next to
#     `examples/results/`; and the README's quickstart listing is examples/quickstart.cpp verbatim.
#
#   check_readme.sh commands <source dir> <bin dir> [<build dir>]
#     Runs the README's commands against the built programs, in a scratch directory where
#     `build/bin` is <bin dir> and `include/`, `examples/` are the source tree's (read only): every
#     line of every ```sh block and every inline `labeldp ...` / `g++ ...` command. Optional parts
#     written `[--flag VALUE]` run both ways (left out, and in with the placeholder values below),
#     alternatives `(A | B)` run each; files the README treats as the user's own (data.csv,
#     prior.csv, outputs.csv, hist.csv, mechanism.json) are made here first. Each must exit 0, and
#     where the README says what comes out, that it has that shape (mechanism files, the certified
#     LP fields, compare's JSON keys and files, privatize's CSV, the version line, quickstart's
#     lines, the one-line error with status 2).
#
# Not run here, and why (each is run by CI itself):
#   bash .ci/demo, bash .ci/test      install Debian packages and take minutes: CI runs .ci/test,
#                                     whose builds compile everything .ci/demo builds; the compare
#                                     run .ci/demo makes is checked by tests/cli/test_cli_compare.
#   cpack -G DEB, cpack --config ..., apt-get install ./labeldp-dev_*.deb, find_package and
#   add_subdirectory/FetchContent     .ci/package (run by .ci/test) builds both packages and
#                                     compiles consumers against them. `cmake --install ...
#                                     --component dev` and the pkg-config compile are run here.
# A README command this script does not know fails the test, naming it: add it here.
# Backticks and $(...) in single quotes are the README's markdown and commands, not expansions.
# shellcheck disable=SC2016
set -uo pipefail

mode=${1:-}
src=${2:-}
if [ -z "$mode" ] || [ -z "$src" ] || [ ! -f "$src/README.md" ]; then
  echo "usage: $0 paths <source dir> | commands <source dir> <bin dir>" >&2
  exit 2
fi
src=$(cd "$src" && pwd)
readme=$src/README.md
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures README check(s) failed" >&2
    exit 1
  fi
  echo "README $mode: all checks passed"
  exit 0
}

# Files the README's commands treat as the user's own; made by the commands mode.
placeholder_files=" data.csv prior.csv outputs.csv hist.csv mechanism.json noisy.csv my_app.cpp "

# ------------------------------------------------------------------------------------------------
if [ "$mode" = paths ]; then
  checked=0
  # Repository paths (trailing punctuation of the sentence dropped).
  while IFS= read -r p; do
    p=${p%%[.,;:)]}
    p=${p%%[.,;:)]}
    checked=$((checked + 1))
    case $p in
      *'*'*) compgen -G "$src/$p" >/dev/null || fail "README names $p, which matches no file" ;;
      *) [ -e "$src/$p" ] || fail "README names $p, which does not exist" ;;
    esac
  done < <(grep -oE '(^|[^A-Za-z0-9_/.-])(\.ci|examples|include|tests|bench|cmake)/[A-Za-z0-9_./*-]*' "$readme" |
    sed -E 's/^[^.a-z]//' | sort -u)
  # Headers, as the README names them: relative to include/labeldp/ (core/audit.hpp), to
  # include/ (labeldp/version.hpp), or by file name (unbiased_grid.hpp, detail/lattice.hpp).
  while IFS= read -r h; do
    checked=$((checked + 1))
    if [ -e "$src/include/labeldp/$h" ] || [ -e "$src/include/$h" ] || [ -e "$src/$h" ]; then continue; fi
    [ -n "$(find "$src/include/labeldp" "$src/tests" -path "*/$h" -print -quit)" ] ||
      fail "README names the header $h, which is not under include/labeldp (nor tests/)"
  done < <(grep -oE '[A-Za-z0-9_/]+\.hpp' "$readme" | sort -u)
  # Result and data files named by file name only: the user's own files (placeholders) or files
  # under examples/results or examples/data.
  while IFS= read -r f; do
    case $placeholder_files in *" $f "*) continue ;; esac
    checked=$((checked + 1))
    [ -e "$src/examples/results/$f" ] || [ -e "$src/examples/data/$f" ] ||
      fail "README names $f, which is in neither examples/results nor examples/data"
  done < <(grep -oE '`[A-Za-z0-9_.-]+\.(png|svg|csv|txt|json)`' "$readme" | tr -d '`' | sort -u)
  # "plots: `test_mse.png`, ... (and `.svg`)": each plot in both formats.
  if grep -q '(and `\.svg`)' "$readme"; then
    while IFS= read -r f; do
      [ -e "$src/examples/results/${f%.png}.svg" ] || fail "README says $f also comes as .svg: no examples/results/${f%.png}.svg"
    done < <(grep -oE '`[A-Za-z0-9_-]+\.png`' "$readme" | tr -d '`' | sort -u)
  fi
  # The quickstart listing is the file, verbatim.
  if grep -q '^`examples/quickstart.cpp`' "$readme"; then
    checked=$((checked + 1))
    listing=$(awk '/^`examples\/quickstart.cpp`/ {f = 1} f && /^```cpp/ {inb = 1; next} inb && /^```/ {exit} inb' "$readme")
    if ! diff <(printf '%s\n' "$listing") "$src/examples/quickstart.cpp" >/dev/null; then
      fail "the README's quickstart listing differs from examples/quickstart.cpp:"
      diff <(printf '%s\n' "$listing") "$src/examples/quickstart.cpp" >&2
    fi
  fi
  # The main job's tables are examples/results/compare.csv (what .ci/demo writes), in thousands:
  # "| method | 202 ± 21 | ..." is test_mse and its sd, the noisy-label table noisy_label_mse.
  csv=$src/examples/results/compare.csv
  if [ -f "$csv" ] && grep -q '^| test MSE (10^3) |' "$readme"; then
    while IFS= read -r problem; do fail "README table vs examples/results/compare.csv: $problem"; done < <(
      awk -F, 'FNR == NR { if (FNR > 1) { t[$1 "@" $2] = $6; tsd[$1 "@" $2] = $7; n[$1 "@" $2] = $4 }; next }
        function k(x) { return sprintf("%.0f", x / 1000) }
        /^\| (test MSE|noisy-label MSE) \(10\^3\) \|/ {
          kind = ($2 ~ /test/) ? "test" : "noisy"; ne = 0
          for (i = 3; i < NF; i++) { e = $i; gsub(/[^0-9.]/, "", e); eps[++ne] = e }
          tables++; next
        }
        /^\|---/ { next }
        kind != "" && /^\| / {
          m = $2; gsub(/\*/, "", m); sub(/ \(.*\)/, "", m); gsub(/^ +| +$/, "", m)
          for (i = 3; i < NF; i++) {
            cell = $i; gsub(/\*/, "", cell); gsub(/^ +| +$/, "", cell)
            key = m "@" eps[i - 2]
            if (!(key in t)) { print "no row " m " at eps " eps[i - 2]; continue }
            want = (kind == "test") ? k(t[key]) " ± " k(tsd[key]) : k(n[key])
            if (cell != want) print kind " MSE of " m " at eps " eps[i - 2] ": README " cell ", compare.csv " want
            cells++
          }
          next
        }
        { kind = "" }
        END { if (tables != 2 || cells < 50) print "found " tables + 0 " tables, " cells + 0 " cells" }
      ' FS=, "$csv" FS='|' "$readme")
    checked=$((checked + 1))
  fi
  [ "$checked" -gt 20 ] || fail "only $checked paths found in README.md: is the extraction broken?"
  echo "README paths: $checked checked"
  finish
fi

# ------------------------------------------------------------------------------------------------
[ "$mode" = commands ] || {
  echo "unknown mode $mode" >&2
  exit 2
}
bin=${3:-}
[ -n "$bin" ] && bin=$(cd "$bin" 2>/dev/null && pwd)
if [ -z "$bin" ] || [ ! -x "$bin/labeldp" ]; then
  echo "commands mode needs the bin dir holding labeldp (build the labeldp_cli and quickstart targets)" >&2
  exit 2
fi
build=$(cd "${4:-$bin/..}" && pwd)  # the configured build directory (for cmake --install)
work=$(mktemp -d "${TMPDIR:-/tmp}/labeldp_readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
mkdir build
ln -s "$bin" build/bin
ln -s "$src/include" include
ln -s "$src/examples" examples
export PATH="$bin:$PATH"
version=$(sed -n 's/^#define LABELDP_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/labeldp/version.hpp")
ran=0

# The user's files. data.csv: a label y in [0, 5000] (as wages), three features, and the same label
# as `wage` (the README's privatize --mechanism line reads that column).
awk 'BEGIN {
  print "y,f1,f2,f3,wage"
  s = 12345
  for (i = 0; i < 300; i++) {
    s = (s * 1103515245 + 12345) % 2147483648; a = s / 2147483648
    s = (s * 1103515245 + 12345) % 2147483648; b = s / 2147483648
    f3 = (i % 3 == 0) ? "north" : ((i % 3 == 1) ? "south" : "west")
    y = 300 + 2500 * a + 800 * b + (f3 == "west" ? 400 : 0)
    if (y > 5000) y = 5000
    printf "%.2f,%.4f,%.4f,%s,%.2f\n", y, a, b, f3, y
  }
}' >data.csv
printf 'output\n' >outputs.csv
for o in 0 500 1000 1500 2000 2500 3000 3500 4000 4500 5000; do echo "$o" >>outputs.csv; done
printf 'lo,hi,mass\n0,1000,0.1\n1000,2000,0.4\n2000,3000,0.3\n3000,5000,0.2\n' >hist.csv
cp "$src/examples/quickstart.cpp" my_app.cpp
# prior.csv and mechanism.json: a private prior of the CPS wages (the README's own `labeldp prior`
# line), and the RR-on-Bins mechanism file for it.
labeldp prior --input examples/data/cps1988.csv --column wage --eps 0.1 --lo 0 --hi 5000 --resolution 50 \
  --output prior.csv >/dev/null || fail "setup: labeldp prior"
labeldp bins --prior prior.csv --eps 1 --json >mechanism.json || fail "setup: labeldp bins --json"

# lines of a file, and its header
nlines() { wc -l <"$1" | tr -d ' '; }
header() { head -n 1 "$1"; }

# check_output <command> <stdout file> <stderr file>: what the README says comes out.
check_output() {
  local cmd=$1 out=$2 err=$3 sub
  sub=$(sed -E 's/^(build\/bin\/)?labeldp +([a-z-]+).*/\2/' <<<"$cmd")
  if [[ $cmd == *--json* && $cmd != *python3* ]]; then
    [ "$(head -c 1 "$out")" = "{" ] || fail "$cmd: --json output does not start with {"
    case $sub in
      bins | optimal | unbiased | interval | baseline)
        if ! grep -q '"format":"labeldp-mechanism"' "$out" || ! grep -q '"version":1' "$out"; then
          fail "$cmd: not a mechanism file (\"format\":\"labeldp-mechanism\", \"version\":1)"
        fi ;;
    esac
    case $sub in
      optimal | unbiased)
        for k in status lower_bound gap; do grep -q "\"$k\"" "$out" || fail "$cmd: no \"$k\" in the output"; done ;;
      audit) grep -q '"eps"' "$out" || fail "$cmd: no \"eps\" in the audit" ;;
      compare)
        for k in rows method eps noisy_label_mse noisy_label_mse_sd test_mse test_mse_sd non_private_test_mse mean_test_mse; do
          grep -q "\"$k\"" "$out" || fail "$cmd: no \"$k\" in compare --json"
        done ;;
    esac
  fi
  if [ "$sub" = privatize ]; then
    local input output
    input=$(sed -nE 's/.*--input ([^ ]+).*/\1/p' <<<"$cmd")
    output=$(sed -nE 's/.*--output ([^ ]+).*/\1/p' <<<"$cmd")
    [ -n "$output" ] || output=$out
    # The input CSV with the label replaced: same header, one row per row.
    [ "$(header "$output")" = "$(header "$input")" ] || fail "$cmd: header not kept"
    [ "$(nlines "$output")" = "$(nlines "$input")" ] || fail "$cmd: $(nlines "$output") lines for $(nlines "$input") input lines"
    if [[ $cmd == *--summary* ]]; then grep -qi 'eps' "$err" || fail "$cmd: --summary printed no eps on stderr"; fi
  fi
  if [ "$sub" = prior ]; then
    [ "$(header prior.csv)" = "value,prob" ] || fail "$cmd: prior.csv header is $(header prior.csv)"
    [ "$(nlines prior.csv)" = 102 ] || fail "$cmd: prior.csv has $(nlines prior.csv) lines, expected 101 values and a header"
  fi
  if [ "$sub" = compare ]; then
    local dir
    dir=$(sed -nE 's/.*--output-dir ([^ ]+).*/\1/p' <<<"$cmd")
    if [ -n "$dir" ]; then
      [ -s "$dir/compare.csv" ] || fail "$cmd: no $dir/compare.csv"
      if command -v gnuplot >/dev/null; then
        for f in test_mse noisy_label_mse; do
          if [ ! -s "$dir/$f.png" ] || [ ! -s "$dir/$f.svg" ]; then fail "$cmd: no $dir/$f.png/.svg"; fi
        done
        if [[ $cmd == *--density* ]]; then [ -s "$dir/density.png" ] || fail "$cmd: no $dir/density.png"; fi
      fi
    fi
    if [[ $cmd != *--json* ]]; then
      if ! grep -q 'non-private' "$out" || ! grep -q 'rr-on-bins' "$out"; then
        fail "$cmd: the table lacks the rr-on-bins or non-private row"
      fi
    fi
  fi
}

# run <command>: runs it (in bash, as written), expects status 0, then check_output.
run() {
  local cmd=$1
  ran=$((ran + 1))
  echo "\$ $cmd"
  local t0=$SECONDS
  if bash -c "$cmd" >out.txt 2>err.txt; then
    [ $((SECONDS - t0)) -lt 2 ] || echo "  ($((SECONDS - t0)) s)"
    check_output "$cmd" out.txt err.txt
  else
    fail "exit status $? from: $cmd"
    sed 's/^/    /' err.txt | head -n 5 >&2
  fi
}

# run_async <name> <command>: run() in the background (the compiles, ~45 s of CPU each);
# collect_async waits for them and reports.
async_names=()
run_async() {
  ran=$((ran + 1))
  echo "\$ $2 (in the background)"
  (bash -c "$2" >"async-$1.out" 2>"async-$1.err"; echo $? >"async-$1.status") &
  async_names+=("$1:$2")
}
collect_async() {
  wait
  local entry name cmd
  for entry in "${async_names[@]}"; do
    name=${entry%%:*}
    cmd=${entry#*:}
    if [ "$(cat "async-$name.status")" != 0 ]; then
      fail "exit status $(cat "async-$name.status") from: $cmd"
      head -n 5 "async-$name.err" >&2
    else
      # both compile quickstart.cpp (my_app.cpp is a copy) and run it
      check_quickstart "async-$name.out" "$cmd"
    fi
  done
}

# check_quickstart <output file> <what>: the lines examples/quickstart.cpp prints.
check_quickstart() {
  if ! grep -qE '^bins: [0-9]+, expected squared error [0-9.]+$' "$1" ||
    ! grep -qE '^audited epsilon: [0-9.e-]+ \(requested 0.5\)$' "$1" ||
    [ "$(grep -cE '^  [0-9.]+ -> [0-9.-]+$' "$1")" != 5 ]; then
    fail "$2 printed: $(cat "$1")"
  fi
}

# variants <README command>: the command with its optional [...] parts left out, and with them in
# (placeholders given values, a|b choices the first, parts containing ... left out); each
# (A | B) alternative separately.
variants() {
  local line=$1 minimal full v
  minimal=$(sed -E 's/ *\[[^]]*\]//g' <<<"$line")
  full=$(sed -E 's/ *\[[^]]*\.\.\.[^]]*\]//g' <<<"$line")
  # baseline's synopsis lists every kind's options; only those of the line's kind are added
  # (labeldp baseline --help: --delta for the Gaussians, --resolution for the discrete kinds).
  if [[ $full =~ --kind\ ([a-z-]+) ]]; then
    [[ ${BASH_REMATCH[1]} == *gaussian ]] || full=$(sed -E 's/ *\[--delta [^]]*\]//' <<<"$full")
    [[ ${BASH_REMATCH[1]} == discrete-* || ${BASH_REMATCH[1]} == exponential ]] ||
      full=$(sed -E 's/ *\[--resolution [^]]*\]//' <<<"$full")
  fi
  full=$(sed -E 's/\[([^]]*)\]/\1/g' <<<"$full")
  full=$(sed -E 's/--time-limit S/--time-limit 30/; s/--max-bias B/--max-bias 100/; s/--delta D/--delta 1e-5/;
    s/--resolution R/--resolution 50/; s/--lo L --hi H/--lo 0 --hi 5000/; s/--output-dir DIR/--output-dir compare-out/;
    s/--density METHOD:EPS/--density rr-on-bins:1/; s/ ([a-z][a-z,-]*)(\|[a-z][a-z,.-]*)+/ \1/g' <<<"$full")
  local alternatives='\(([^|)]*) \| ([^)]*)\)'
  for v in "$minimal" "$full"; do
    if [[ $v =~ $alternatives ]]; then
      echo "${v/"${BASH_REMATCH[0]}"/${BASH_REMATCH[1]}}"
      echo "${v/"${BASH_REMATCH[0]}"/${BASH_REMATCH[2]}}"
    else
      echo "$v"
    fi
  done | awk '!seen[$0]++'
}

# 1. The ```sh blocks, continuation lines joined.
while IFS= read -r line; do
  case $line in
    'bash .ci/demo' | 'bash .ci/test') echo "(not run here: $line; CI runs it, see the top of this script)"; continue ;;
  esac
  while IFS= read -r v; do
    if grep -qE '(^| )[A-Z][A-Z:]+( |$)' <<<"$v"; then
      fail "README command has a placeholder this script does not fill: $v"
      continue
    fi
    run "$v"
  done < <(variants "$line")
done < <(awk '/^```sh$/ {inb = 1; next} inb && /^```/ {inb = 0; next} inb {
  if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }' "$readme" | sed -E 's/  +/ /g')

# 2. Inline commands (`labeldp ...`, `g++ ...`, ...), each known here; an unknown one fails.
while IFS= read -r span; do
  case $span in
    'labeldp --version')
      ran=$((ran + 1))
      [ "$(labeldp --version)" = "labeldp $version" ] || fail "labeldp --version prints '$(labeldp --version)', not 'labeldp $version'" ;;
    'labeldp COMMAND --help')
      for c in bins optimal unbiased interval baseline prior audit privatize compare; do
        ran=$((ran + 1))
        if ! labeldp "$c" --help >out.txt 2>&1 || ! grep -q -- '--' out.txt; then fail "labeldp $c --help"; fi
      done ;;
    'labeldp compare ... --json | python3 -c '*)
      # "..." is the compare command above; the one-liner prints the best method per eps.
      if command -v python3 >/dev/null; then
        cmd=${span/ ... / --input data.csv --column y --features f1,f2,f3 --eps 0.5,1,2,4,8 --methods rr-on-bins,unbiased,laplace --seeds 2 --lo 0 --hi 5000 --resolution 50 }
        run "$cmd"
        if [ "$(wc -l <out.txt)" != 5 ] || [ "$(grep -cE "^[0-9.]+ \([0-9.e+-]+, '[a-z-]+'\)$" out.txt)" != 5 ]; then
          fail "the README's compare | python3 one-liner printed: $(cat out.txt)"
        fi
      else
        echo "(python3 not installed: the README's compare --json | python3 example not run)"
      fi ;;
    'labeldp baseline --kind K')
      # K: each kind the README lists, with the options it takes (labeldp baseline --help).
      for k in laplace discrete-laplace gaussian discrete-gaussian staircase discrete-staircase exponential rr rr-with-prior; do
        extra=""
        case $k in *gaussian) extra+=" --delta 1e-5" ;; esac
        case $k in discrete-* | exponential) extra+=" --resolution 50" ;; esac
        case $k in rr | rr-with-prior) extra+=" --prior prior.csv" ;; esac
        run "labeldp baseline --kind $k --eps 1 --lo 0 --hi 5000$extra --json"
      done ;;
    'g++ -std=c++20 -O2 -I include -I /usr/include/eigen3 examples/quickstart.cpp')
      run_async byhand "$span -o quickstart-by-hand && ./quickstart-by-hand" ;;
    'g++ -std=c++20 $(pkg-config --cflags labeldp) my_app.cpp')
      # The installed package (README, 'Using it from CMake': cmake --install ... --component dev).
      if command -v pkg-config >/dev/null; then
        run_async pkgconfig "cmake --install '$build' --component dev --prefix prefix >/dev/null && export PKG_CONFIG_PATH=\$PWD/prefix/share/pkgconfig && $span -o my_app && ./my_app"
      else
        echo "(pkg-config not installed: the README's pkg-config compile not run; .ci/package runs it)"
      fi ;;
    'cmake --build build --target labeldp_docs')
      # In the build directory under test (here `build` is only the programs' bin/).
      if [ -f "$build/Doxyfile" ]; then
        run "cmake --build '$build' --target labeldp_docs"
        [ -s "$build/docs/html/index.html" ] || fail "$span wrote no docs/html/index.html"
      else
        echo "(not run here: $span; the docs are not configured in $build (doxygen missing or LABELDP_BUILD_DOCS=OFF); .ci/test builds them)"
      fi ;;
    'labeldp' | 'labeldp audit' | 'labeldp compare' | 'labeldp prior' | 'labeldp 0.1.0' | 'build/bin/labeldp' | 'build/bin/quickstart' | 'apt-get')
      ;; # names, not commands (labeldp 0.1.0 is --version's output)
    'cpack -G DEB' | 'cpack --config CPackSourceConfig.cmake' | 'apt-get install ./labeldp-dev_'*'_all.deb')
      echo "(not run here: $span; .ci/package builds and uses the packages)" ;;
    *) fail "README has an inline command this script does not run: \`$span\` (add it to tests/readme/check_readme.sh)" ;;
  esac
done < <(grep -oE '`[^`]+`' "$readme" | sed -E 's/^`//; s/`$//' |
  grep -E '^(build/bin/|labeldp( |$)|g\+\+ |cmake |cpack |apt-get|ctest |bash |\./)' | awk '!seen[$0]++')

# 3. quickstart as built, and bad input: status 2, one line `labeldp: error: <file>:<line>: ...`.
ran=$((ran + 1))
if build/bin/quickstart >out.txt 2>err.txt; then
  check_quickstart out.txt build/bin/quickstart
else
  fail "build/bin/quickstart exited with status $?"
fi
ran=$((ran + 1))
printf 'wage\n1\nnot-a-number\n' >bad.csv
labeldp privatize --eps 1 --input bad.csv --column wage --lo 0 --hi 5000 --resolution 50 >out.txt 2>err.txt
status=$?
if [ "$status" != 2 ] || [ -s out.txt ] || [ "$(wc -l <err.txt)" != 1 ] || ! grep -qE '^labeldp: error: bad\.csv:3: ' err.txt; then
  fail "bad input: status $status, stdout $(wc -c <out.txt) bytes, stderr: $(cat err.txt)"
fi

collect_async
echo "README commands: $ran run"
[ "$ran" -gt 15 ] || fail "only $ran README commands found: is the extraction broken?"
finish
