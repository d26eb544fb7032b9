"""Builds the extension mxp._mxp for pip: libmxp (static, with its per-ISA
kernel flags) comes from CMake, then setuptools compiles python/src/*.c and
links it against the NumPy of the build environment.  Build files go to
build-pip/, away from CMake's build/.

The package needs the NumPy generation it was compiled for (NumPy 2's
headers target the 2.0 API; NumPy 1.x's only run on 1.x), so the
dependency is written here from the NumPy that builds it."""
import glob
import os
import subprocess
import sys

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build-pip"), exist_ok=True)  # egg_info's folder must exist before any command


class build_with_cmake(build_ext):
    def run(self):
        # One folder per CMake release: pip's isolated build brings CMake from
        # PyPI, --no-build-isolation uses the system's, and neither reads the
        # other's cache.
        version = subprocess.check_output(["cmake", "--version"], text=True).split()[2]
        lib_dir = os.path.join(ROOT, "build-pip", "libmxp-cmake" + version)
        subprocess.check_call(["cmake", "-S", ROOT, "-B", lib_dir, "-DCMAKE_BUILD_TYPE=Release",
                               "-DMXP_BUILD_TESTS=OFF", "-DMXP_PYTHON=OFF"], stdout=subprocess.DEVNULL)
        subprocess.check_call(["cmake", "--build", lib_dir, "--target", "mxp_static", "-j", str(os.cpu_count() or 2)])
        # libraries libmxp.a needs besides libm and pthreads (SLEEF when CMake found it)
        with open(os.path.join(lib_dir, "mxp-private-libs.txt")) as f:
            private_libs = f.read().split()
        for ext in self.extensions:
            ext.extra_objects = [os.path.join(lib_dir, "libmxp.a")]
            ext.libraries = private_libs + ext.libraries
        super().run()


# The extension's objects depend on the interpreter and on the NumPy headers:
# one build folder for each pair, so that a build never links stale objects.
PY_NUMPY = "py%d.%d-numpy%s" % (sys.version_info[0], sys.version_info[1], numpy.__version__)
NUMPY_MAJOR = int(numpy.__version__.split(".")[0])
NUMPY_REQUIREMENT = "numpy>=2.0" if NUMPY_MAJOR >= 2 else "numpy>=1.22,<2"

setup(
    install_requires=[NUMPY_REQUIREMENT],
    ext_modules=[Extension(
        "mxp._mxp",
        sources=sorted(glob.glob("python/src/*.c")),
        include_dirs=["include", "python/src", numpy.get_include()],
        extra_compile_args=["-std=c11", "-O2"],
        libraries=["m", "pthread", "dl"],
    )],
    cmdclass={"build_ext": build_with_cmake},
    # build_ext force: the module is compiled anew each time (seconds; libmxp
    # stays incremental in CMake), as setuptools would keep an old module
    # that is newer than every source even when the list of sources changed.
    options={"build": {"build_base": os.path.join("build-pip", PY_NUMPY)}, "build_ext": {"force": True},
             "egg_info": {"egg_base": "build-pip"}},
)
