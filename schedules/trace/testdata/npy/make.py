# Makes the .npy test files with real NumPy (1.24), so the Go reader is tested against the
# reference writer, not against itself. Run: python3 make.py (in this directory).
import numpy as np

d = np.array([[0, 10, 20], [5, 0, 0], [7, 1, 0]], dtype="<i8")
np.save("i8_2d.npy", d)
np.save("pair_i8_3d.npy", np.stack([d, d.T]))           # what WriteNPY must reproduce byte for byte
np.save("f8_3d.npy", np.stack([d, d.T]).astype("<f8"))
np.save("f4_2d.npy", d.astype("<f4"))
np.save("i4_2d.npy", d.astype("<i4"))
np.save("u2_2d.npy", d.astype("<u2"))
np.save("u1_2d.npy", d.astype("u1"))
with open("v2_i8_2d.npy", "wb") as f:
    np.lib.format.write_array(f, d, version=(2, 0))

bad = {
    "fortran.npy": np.asfortranarray(np.stack([d, d.T])),
    "bigendian.npy": d.astype(">i8"),
    "onedim.npy": np.arange(4, dtype="<i8"),
    "nonsquare.npy": np.zeros((2, 3), dtype="<i8"),
    "nan.npy": np.array([[0, np.nan], [1, 0]], dtype="<f8"),
    "inf.npy": np.array([[0, 1], [np.inf, 0]], dtype="<f8"),
    "negative.npy": np.array([[0, 1], [-3, 0]], dtype="<i8"),
    "fraction.npy": np.array([[0, 1.5], [1, 0]], dtype="<f8"),
    "complex.npy": np.zeros((2, 2), dtype="<c16"),
    "empty.npy": np.zeros((0, 0), dtype="<i8"),
}
for name, a in bad.items():
    np.save(name, a)
with open("i8_2d.npy", "rb") as f:
    good = f.read()
with open("truncated.npy", "wb") as f:
    f.write(good[:-5])
with open("trailing.npy", "wb") as f:
    f.write(good + b"junk")
