"""Builds the extension mxp._mxp for pip: libmxp (static, with its per-ISA
kernel flags) comes from CMake, then setuptools compiles python/src/*.c and
links it.  Build files go to build-pip/, away from CMake's build/."""
import glob
import os
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class build_with_cmake(build_ext):
    def run(self):
        lib_dir = os.path.join(ROOT, "build-pip", "libmxp")
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


setup(
    ext_modules=[Extension(
        "mxp._mxp",
        sources=sorted(glob.glob("python/src/*.c")),
        include_dirs=["include", "python/src", numpy.get_include()],
        extra_compile_args=["-std=c11", "-O2"],
        libraries=["m", "pthread"],
    )],
    cmdclass={"build_ext": build_with_cmake},
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
)
