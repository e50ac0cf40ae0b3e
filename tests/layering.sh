#!/usr/bin/env bash
# tests/layering.sh SOURCE_DIR: fails when a file of a module includes another module that the
# module may not use. The modules and what each may use are src/CMakeLists.txt's genhost_module()
# calls (their genhost_* DEPS, taken transitively); docs/architecture.md's table says the same in
# words. A file of module M is src/M/* or include/genhost/M/*; an include of "genhost/N/..." in it
# needs N == M or N among M's dependencies.
set -euo pipefail
root=${1:?usage: layering.sh SOURCE_DIR}
cmake_file="$root/src/CMakeLists.txt"

# module -> its direct genhost_* dependencies, from the genhost_module(...) calls (which may span
# lines).
declare -A direct
while IFS= read -r call; do
  name=$(sed -E 's/^genhost_module\(([a-z_]+).*/\1/' <<<"$call")
  deps=$( (grep -oE 'genhost_[a-z_]+' <<<"${call#*DEPS}" || true) | sed 's/^genhost_//' | tr '\n' ' ')
  direct[$name]=$deps
done < <(awk '/^genhost_module\(/ {call = $0; while (call !~ /\)/ && (getline line) > 0) call = call " " line; print call}' "$cmake_file")
[ ${#direct[@]} -gt 5 ] || { echo "layering: found no modules in $cmake_file" >&2; exit 1; }

# closure MODULE: the module and everything it may use.
closure() {
  local seen=" $1 " queue=("$1") m d
  while [ ${#queue[@]} -gt 0 ]; do
    m=${queue[0]}
    queue=("${queue[@]:1}")
    for d in ${direct[$m]:-}; do
      [[ $seen == *" $d "* ]] && continue
      seen+="$d "
      queue+=("$d")
    done
  done
  echo "$seen"
}

violations=0
checked=0
for module in "${!direct[@]}"; do
  allowed=$(closure "$module")
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    while IFS= read -r used; do
      if [[ $allowed != *" $used "* ]]; then
        echo "layering: ${file#"$root"/} (module $module) includes genhost/$used/, which $module may not use (it may use:$allowed)"
        violations=$((violations + 1))
      fi
    done < <( (grep -hoE '^#include "genhost/[a-z_]+/' "$file" || true) | sed -E 's|.*genhost/([a-z_]+)/|\1|' | sort -u)
  done < <(find "$root/src/$module" "$root/include/genhost/$module" -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 2>/dev/null)
done
echo "layering: ${#direct[@]} modules, $checked files, $violations violation(s)"
[ "$violations" -eq 0 ]
