#!/usr/bin/env bash
# gpu-abi-check.sh: checks the NVML and CUDA bindings (purego, no cgo) against NVIDIA's own
# headers and driver libraries, on a machine without a GPU. It needs network access to a Debian
# mirror, apt-get, dpkg-deb, a C compiler and Go; it installs nothing: Debian's packages are
# fetched with `apt-get download` into a temporary directory (with a private apt state and a
# sources list that adds the non-free component) and unpacked there with dpkg-deb -x.
#
#   scripts/gpu-abi-check.sh                      # from the repository root
#   NVML13_H=/path/to/nvml.h scripts/gpu-abi-check.sh
#
# Packages (Debian bookworm non-free): libnvidia-ml-dev (nvml.h of CUDA 11.8), nvidia-cuda-dev
# (cuda.h of 11.8: only that file is unpacked), nvidia-cuda-toolkit (ptxas), libcuda1,
# libnvidia-ml1 and libnvidia-ptxjitcompiler1 (the R535 driver libraries). NVML13_H adds a
# newer nvml.h (e.g. NVIDIA/go-nvml's gen/nvml/nvml.h) for what only NVML 13 has.
#
# It checks: (1) every constant and struct layout the Go code mirrors (the Go tests' own dump,
# unsafe.Sizeof/Offsetof) against a C program compiled with each header (sizeof, offsetof, the
# constant); (2) that the stand-in driver libraries the tests build compile against the real
# headers (so their prototypes are the headers'); (3) that every symbol the bindings look up is
# exported by the R535 libraries, by the name the binding picks; (4) that ptxas assembles
# gpu/cuda/kernels.ptx and gpu/program/cudaprog/program.ptx for sm_70, sm_80 and sm_90; (5) that the binary (CGO_ENABLED=0) loads the
# real R535 libraries and reports that there is no GPU, with a clear message. Exit status 0 when
# every check passes, 1 otherwise, 2 when the packages cannot be fetched.
set -u

SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEEP=${KEEP:-}
ROOT=$(pwd)
TMP=$(mktemp -d /tmp/gpu-abi-check.XXXXXX)
[ -n "$KEEP" ] || trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok:   $*"; }

echo "gpu-abi-check, $(date -u +%FT%TZ), $(uname -srm); work directory $TMP"
for tool in apt-get dpkg-deb go nm; do
	command -v "$tool" >/dev/null || { echo "missing $tool"; exit 2; }
done
CC=${CC:-$(command -v gcc || command -v cc)}
[ -n "$CC" ] || { echo "no C compiler (set CC)"; exit 2; }

echo
echo "=== fetching Debian's packages ($SUITE, main contrib non-free)"
mkdir -p "$TMP/apt/lists/partial" "$TMP/apt/cache/archives/partial" "$TMP/debs" "$TMP/root"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main contrib non-free non-free-firmware" >"$TMP/apt/sources.list"
APT=(-o "Dir::Etc::sourcelist=$TMP/apt/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$TMP/apt/lists" -o "Dir::Cache=$TMP/apt/cache" -o "APT::Sandbox::User=root")
if ! apt-get "${APT[@]}" update >"$TMP/apt-update.log" 2>&1; then
	echo "apt-get update failed:"; tail -20 "$TMP/apt-update.log"; exit 2
fi
PKGS=(libnvidia-ml-dev nvidia-cuda-dev nvidia-cuda-toolkit libcuda1 libnvidia-ml1 libnvidia-ptxjitcompiler1)
for p in "${PKGS[@]}"; do
	echo "$p $(apt-cache "${APT[@]}" show "$p" 2>/dev/null | awk '/^Version:/{print $2; exit}')"
done
if ! (cd "$TMP/debs" && apt-get "${APT[@]}" download "${PKGS[@]}" >"$TMP/apt-download.log" 2>&1); then
	echo "apt-get download failed:"; tail -20 "$TMP/apt-download.log"; exit 2
fi
ls -l "$TMP/debs" | awk 'NR>1{print $5, $9}'
for deb in "$TMP"/debs/*.deb; do
	case $deb in
	*/nvidia-cuda-dev_*) dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$TMP/root" ./usr/include/cuda.h ;;
	*) dpkg-deb -x "$deb" "$TMP/root" ;;
	esac
done
INC=$TMP/root/usr/include
LIBDIR=$(dirname "$(find "$TMP/root" -name libcuda.so.1 | head -1)")
PTXAS=$(find "$TMP/root" -path '*bin/ptxas' | head -1)
echo "nvml.h: $(grep -m1 'define NVML_API_VERSION_STR' "$INC/nvml.h")"
echo "cuda.h: $(grep -m1 'define CUDA_VERSION' "$INC/cuda.h")"
echo "driver libraries: $LIBDIR: $(cd "$LIBDIR" && ls | tr '\n' ' ')"

echo
echo "=== (1) constants and layouts: Go (unsafe.Sizeof/Offsetof, the constants) against C (sizeof, offsetof)"
GPU_ABI_DUMP=$TMP/go-nvml.txt go test -count=1 -run '^TestDumpABI$' ./gpu/nvml/internal/nv >/dev/null || fail "go test dump (nvml)"
GPU_ABI_DUMP=$TMP/go-cuda.txt go test -count=1 -run '^TestDumpABI$' ./gpu/cuda >/dev/null || fail "go test dump (cuda)"

# check DUMP HEADER: compiles one C program per entry (an entry the header lacks does not
# compile: it is reported absent) and compares its value with Go's.
check() {
	local dump=$1 header=$2 label=$3 n=0 same=0 absent=0 kind a b c d expr name gov
	while read -r kind a b c d; do
		case $kind in
		sizeof) expr="sizeof($a)"; name="sizeof($a)"; gov=$b; [ "$a" = unsigned_long ] && expr="sizeof(unsigned long)" ;;
		offsetof) expr="offsetof($a, $b)"; name="offsetof($a, $b)"; gov=$c ;;
		const) expr="($a)"; name=$a; gov=$b ;;
		*) continue ;;
		esac
		n=$((n + 1))
		printf '#include <stddef.h>\n#include <stdio.h>\n#include "%s"\nint main(void){printf("%%lld\\n",(long long)%s);return 0;}\n' "$header" "$expr" >"$TMP/e.c"
		if ! "$CC" -w -o "$TMP/e" "$TMP/e.c" 2>/dev/null; then
			echo "  absent in $label: $name (Go $gov)"
			absent=$((absent + 1))
			continue
		fi
		local cv
		cv=$("$TMP/e")
		if [ "$cv" = "$gov" ]; then
			same=$((same + 1))
		elif [ "$c" = min ] || [ "$d" = min ]; then
			if [ "$gov" -ge "$cv" ]; then
				echo "  $name: Go $gov, $label $cv (Go may be larger: documented)"
				same=$((same + 1))
			else
				fail "$name: Go $gov, $label $cv"
			fi
		else
			fail "$name: Go $gov, $label $cv"
		fi
	done <"$dump"
	echo "  $label: $n entries, $same agree, $absent absent, $((n - same - absent)) differ"
}
check "$TMP/go-nvml.txt" "$INC/nvml.h" "nvml.h (CUDA 11.8)"
if [ -n "${NVML13_H:-}" ]; then
	cp "$NVML13_H" "$TMP/nvml13.h"
	echo "  newer header: $(grep -m1 'define NVML_API_VERSION_STR' "$TMP/nvml13.h")"
	check "$TMP/go-nvml.txt" "$TMP/nvml13.h" "nvml.h (NVML13_H)"
fi
check "$TMP/go-cuda.txt" "$INC/cuda.h" "cuda.h (11.8)"

echo
echo "=== (2) the tests' stand-in libraries compile against the real headers (same prototypes)"
SA=$ROOT/gpu/standin/testdata
if "$CC" -Wall -shared -fPIC -DSTANDIN_REAL_HEADERS -DSTANDIN_NO_TEMPERATURE_V -I"$INC" -o "$TMP/nvml-standin.so" "$SA/fakenvml.c" 2>"$TMP/cc.log"; then
	ok "fakenvml.c against nvml.h (CUDA 11.8, which has no nvmlDeviceGetTemperatureV)"
else
	fail "fakenvml.c against nvml.h (11.8)"; cat "$TMP/cc.log"
fi
if [ -n "${NVML13_H:-}" ]; then
	mkdir -p "$TMP/inc13" && cp "$NVML13_H" "$TMP/inc13/nvml.h"
	if "$CC" -Wall -Wno-deprecated-declarations -shared -fPIC -DSTANDIN_REAL_HEADERS -I"$TMP/inc13" -o "$TMP/nvml13-standin.so" "$SA/fakenvml.c" 2>"$TMP/cc.log"; then
		ok "fakenvml.c against the NVML13_H nvml.h"
	else
		fail "fakenvml.c against the NVML13_H nvml.h"; cat "$TMP/cc.log"
	fi
fi
if "$CC" -Wall -shared -fPIC -DSTANDIN_REAL_HEADERS -I"$INC" -o "$TMP/cuda-standin.so" "$SA/fakecuda.c" -lrt 2>"$TMP/cc.log"; then
	ok "fakecuda.c against cuda.h (11.8)"
else
	fail "fakecuda.c against cuda.h (11.8)"; cat "$TMP/cc.log"
fi

echo
echo "=== (3) symbols the bindings look up, in the R535 libraries (the name each binding binds)"
symcheck() {
	local lib=$1 src=$2 optional=$3 line names found
	nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$TMP/syms"
	local n=0 bad=0
	while read -r line; do
		names=$(echo "$line" | grep -o '"[a-zA-Z0-9_]*"' | tr -d '"')
		found=""
		for s in $names; do
			if grep -qx "$s" "$TMP/syms"; then found=$s; break; fi
		done
		n=$((n + 1))
		if [ -n "$found" ]; then
			echo "  $(echo "$names" | tr '\n' ' ')-> $found"
		elif echo " $optional " | grep -q " $(echo "$names" | head -1) "; then
			echo "  $(echo "$names" | tr '\n' ' ')-> absent (optional: the binding falls back)"
		else
			fail "$(basename "$lib") exports none of: $names"; bad=$((bad + 1))
		fi
	done < <(grep -E '^\s*\{&[a-zA-Z0-9.]+, \[\]string\{' "$src")
	echo "  $(basename "$lib"): $n bindings, $bad missing"
}
symcheck "$LIBDIR/libcuda.so.1" gpu/cuda/cuda.go ""
symcheck "$LIBDIR/libcuda.so.1" gpu/program/cudaprog/shared.go ""
# The compiled replay's stream memory operation (gpu/program/cudaprog/driver.go binds the first
# of these names it finds).
if nm -D --defined-only "$LIBDIR/libcuda.so.1" | awk '{print $3}' | grep -qx 'cuStreamWaitValue32_v2\|cuStreamWaitValue32'; then
	ok "libcuda.so.1 exports cuStreamWaitValue32_v2 or cuStreamWaitValue32"
else
	fail "libcuda.so.1 exports neither cuStreamWaitValue32_v2 nor cuStreamWaitValue32"
fi
symcheck "$LIBDIR/libnvidia-ml.so.1" gpu/nvml/internal/nv/lib.go "nvmlDeviceGetTemperatureV nvmlDeviceGetNumaNodeId"

echo
echo "=== (4) ptxas assembles gpu/cuda/kernels.ptx and gpu/program/cudaprog/program.ptx"
echo "  $("$PTXAS" --version | tail -1)"
for ptx in gpu/cuda/kernels.ptx gpu/program/cudaprog/program.ptx; do
	base=$(basename "$ptx" .ptx)
	for sm in sm_70 sm_80 sm_90; do
		if "$PTXAS" -arch="$sm" -o "$TMP/$base.$sm.cubin" "$ptx" 2>"$TMP/ptxas.log"; then
			ok "ptxas -arch=$sm $ptx: $(stat -c %s "$TMP/$base.$sm.cubin") bytes of cubin"
		else
			fail "ptxas -arch=$sm $ptx"; cat "$TMP/ptxas.log"
		fi
	done
done

echo
echo "=== (5) the binary on the real R535 libraries, without a GPU"
if ! CGO_ENABLED=0 go build -o "$TMP/tetris-hil" ./cmd/tetris-hil; then
	fail "CGO_ENABLED=0 go build ./cmd/tetris-hil"
else
	ok "CGO_ENABLED=0 go build ./cmd/tetris-hil"
	out=$(LD_LIBRARY_PATH=$LIBDIR "$TMP/tetris-hil" devices 2>&1); rc=$?
	echo "  \$ LD_LIBRARY_PATH=$LIBDIR tetris-hil devices   (exit $rc)"
	echo "  $out"
	if [ $rc -ne 0 ] && echo "$out" | grep -q -- "--fake" && echo "$out" | grep -qi "driver is not running\|no GPU"; then
		ok "NVML loads and says the driver is not running (no GPU), suggesting --fake"
	else
		fail "devices on the real NVML did not report a missing GPU clearly"
	fi
	out=$(echo '{"op":"quit"}' | LD_LIBRARY_PATH=$LIBDIR timeout 30 "$TMP/tetris-hil" worker --engine cuda --gpu 0 --cuda-ordinal 0 2>&1); rc=$?
	echo "  \$ LD_LIBRARY_PATH=$LIBDIR tetris-hil worker --engine cuda --gpu 0   (exit $rc)"
	echo "$out" | sed 's/^/  /'
	if [ $rc -ne 0 ] && echo "$out" | grep -q "no GPU visible; run with --fake"; then
		ok "libcuda.so.1 loads with every symbol bound; cuInit reports no device, suggesting --fake"
	else
		fail "the cuda engine on the real libcuda.so.1 did not report a missing GPU clearly"
	fi
fi

echo
if [ $FAILS -eq 0 ]; then
	echo "=== all checks passed"
	exit 0
fi
echo "=== $FAILS checks failed"
exit 1
