# Sourced by scripts that need Debian packages (and Python modules).
#   ensure_packages PACKAGE...
#       installs, with apt-get, those of the packages that are not installed (root or sudo needed then);
#       does nothing when all are present.
ensure_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing ${missing[*]}" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "need root or sudo to install ${missing[*]}" >&2; return 1; }
        sudo="sudo"
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

#   ensure_python_module MODULE REQUIREMENT DEBIAN_PACKAGE
#       makes `import MODULE` work in the python3 on $PATH (the one tests start): does nothing when it already
#       does; else installs REQUIREMENT with that Python's pip, and where that Python has no pip or refuses
#       (Debian's own Python), Debian's DEBIAN_PACKAGE. Fails when the module still cannot be imported.
ensure_python_module() {
    local module="$1" requirement="$2" debian_package="$3"
    python3 -c "import $module" 2>/dev/null && return 0
    echo "installing $requirement for $(command -v python3)" >&2
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check "$requirement" >&2 || ensure_packages "$debian_package"
    python3 -c "import $module" 2>/dev/null || { echo "python3 cannot import $module after installing it" >&2; return 1; }
}
