#!/usr/bin/env bash
# fetch.sh - clones the programs of eval/realprog/run.sh into SRC_DIR, each
# at the commit the table was made with (SRC_DIR/NAME, a work tree checked
# out at that commit). A clone already there is checked out at the commit
# again (nothing fetched if it has it).
#
# usage: eval/realprog/fetch.sh SRC_DIR [NAME...]
#   NAME   only these (the first word of each line of REPOS below)
#
# To clone from copies elsewhere, use git's own URL rewriting, e.g.
#   git config --global url.FROM.insteadOf https://github.com/OWNER/NAME
set -euo pipefail

(($# >= 1)) || { sed -n 's/^# \{0,1\}\(usage: .*\)/\1/p' "$0" >&2; exit 2; }
mkdir -p "$1"
dest=$(realpath "$1")
shift

# NAME  URL  COMMIT
REPOS=(
    "cJSON https://github.com/DaveGamble/cJSON a29814f285cc531c00223743ad3c55cd38c0dc56"
    "lz4 https://github.com/lz4/lz4 d9c01a3d49114dc28e2dfbbc0a8990e88be7b694"
    "miniz https://github.com/richgel999/miniz e78dfd22d0a9521d1b8019f3642357b59d1261fb"
    "bbc https://github.com/maksimKorzh/bbc 0fffef1de7dc9d7391752e00e5ee856ae54f74df"
    "lua https://github.com/lua/lua 53b41d0cddd80bf33fdc631bdd32e3ba53842b89"
    "c4 https://github.com/rswier/c4 2feb8c0a142b2e513be69442c24af82dbaf41a25"
    "tiny-regex-c https://github.com/kokke/tiny-regex-c f2632c6d9ed25272987471cdb8b70395c2460bdb"
    "monocypher https://github.com/LoupVaillant/Monocypher ab2b16dd619ad5f6979a4fbe69cfa324a6fcc35f"
    "chibicc https://github.com/rui314/chibicc 90d1f7f199cc55b13c7fdb5839d1409806633fdb"
    # The held-out set (run.sh --set held-out).
    "zlib https://github.com/madler/zlib d201f04c72b0881220f5ba75ca19fd0e19fa848b"
    "jsmn https://github.com/zserge/jsmn 25647e692c7906b96ffd2b05ca54c097948e879c"
    "heatshrink https://github.com/atomicobject/heatshrink 7d419e1fa4830d0b919b9b6a91fe2fb786cf3280"
    "qoi https://github.com/phoboslab/qoi e084ec009b38c755acc40fe31d3f83ee17935b9d"
    "lodepng https://github.com/lvandeve/lodepng 865adac2b8149774401626101ec618e3de45e1d8"
    "c-ray https://github.com/jtsiomb/c-ray 827749558191f8f194185bb4f625722d3d2ddd20"
    "tinyexpr https://github.com/codeplea/tinyexpr 9907207e5def0fabdb60c443517b0d9e9d521393"
    "parson https://github.com/kgabis/parson ba29f4eda9ea7703a9f6a9cf2b0532a2605723c3"
)

for entry in "${REPOS[@]}"; do
    read -r name url commit <<<"$entry"
    (($# == 0)) || [[ " $* " == *" $name "* ]] || continue
    dir=$dest/$name
    if [[ ! -d $dir/.git ]]; then
        echo "fetch.sh: $name: cloning $url" >&2
        timeout 600 git clone --quiet --no-checkout "$url" "$dir"
    fi
    if ! git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
        timeout 600 git -C "$dir" fetch --quiet origin "$commit"
    fi
    timeout 600 git -C "$dir" -c advice.detachedHead=false checkout --quiet --force "$commit"
    echo "fetch.sh: $name at $(git -C "$dir" log -1 --format='%h %cs %s' "$commit")" >&2
done
