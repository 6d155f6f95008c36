"""Builds the `asteria` package for `pip install apps/python`: CMake configures the project
(the repository two levels up) for this interpreter, builds the binding's target, and the
package's files (the Python sources here, the compiled _asteria) go into the wheel.

ASTERIA_BUILD_DIR: the CMake build directory to use (default: <repository>/build/python-<python
version>); ASTERIA_BUILD_JOBS: parallel build jobs (default: the CPU count)."""
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        version = sysconfig.get_python_version()
        build = os.environ.get("ASTERIA_BUILD_DIR", os.path.join(ROOT, "build", f"python-{version}"))
        jobs = os.environ.get("ASTERIA_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               f"-DASTERIA_PYTHON_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "asteria_python_package", "-j", jobs])
        built = os.path.join(build, "python", "asteria")
        compiled = [f for f in os.listdir(built) if f.startswith("_asteria") and f.endswith(sysconfig.get_config_var("EXT_SUFFIX"))]
        if not compiled:
            raise RuntimeError(f"{built}: no _asteria module for Python {version} (is pybind11-dev installed? "
                               "scripts/install-deps.sh installs it)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, compiled[0]), target)


setup(
    packages=["asteria"],
    package_dir={"asteria": "asteria"},
    ext_modules=[Extension("asteria._asteria", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
