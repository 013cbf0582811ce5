"""The PXE kit for a lab (scripts/mkpxe, make pxe, deploy/): its TFTP tree, its dnsmasq, LAVA's grub.

The TFTP tree names no absolute path, so it can be copied to a lab's server. dnsmasq accepts both
configurations (DHCP, and proxy-DHCP beside a lab's own DHCP server), and a DHCPDISCOVER sent to
it in a network namespace (root only) gets an offer without a router or DNS server. make pxe
hands its variables to mkpxe. deploy/lava/x86-grub.jinja2, the device type that gives the stock
x86 type GRUB's boot method, renders with lavacli against lava-server's templates, with the
example lab dictionary. (switchyard-grub.yaml is not run through lava-run here: with QEMU as
the board, GRUB's prompt lost single typed characters, docs/lab.md.)
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import delivery
from switchyard import lava_qemu

ROOT = delivery.ROOT
MKPXE = ROOT / "scripts" / "mkpxe"
LAVA_DIR = ROOT / "deploy" / "lava"
GRUB_JOB = LAVA_DIR / "switchyard-grub.yaml"
SERVER_ADDRESS, SUBNET, RANGE = "10.77.1.1/24", "10.77.1.0", "10.77.1.100,10.77.1.150,1h"
DHCP_ROUTER, DHCP_DNS, DHCP_VENDOR = "3", "6", "43"  # option codes, as the JSON keys are
NETNS_REASON = delivery.netns_unusable_reason()


def mkpxe(out, *args):
    proc = subprocess.run([sys.executable, str(MKPXE), *map(str, args), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """Two mkpxe trees on the namespace's "server" interface: DHCP, and proxy-DHCP."""
    for image in (delivery.BUILD / "switchyard.elf", delivery.BUILD / "switchyard32.elf"):
        assert image.is_file(), f"kernel image {image} not found: run make"
    base = tmp_path_factory.mktemp("mkpxe")
    return {"dhcp": mkpxe(base / "dhcp", "--interface", "server", "--dhcp-range", RANGE,
                          "--console", "ttyS1", "--cmdline", "tests=dr.*"),
            "proxy": mkpxe(base / "proxy", "--interface", "server", "--proxy-dhcp", SUBNET)}


@pytest.mark.parametrize("mode", ["dhcp", "proxy"])
def test_the_tftp_tree_names_no_absolute_path(trees, mode):
    """Every file of the tree, GRUB's images and the kernels included, is free of the build
    directory, the checkout and the output directory; the configuration files name their
    files relative to the TFTP root."""
    tree = trees[mode] / "tftp"
    needles = {str(path).encode() for path in (ROOT, delivery.BUILD, trees[mode].resolve())}
    files = [path for path in tree.rglob("*") if path.is_file()]
    assert len(files) > 100, files  # GRUB's modules too
    found = [(str(path.relative_to(tree)), needle.decode()) for path in files
             for needle in needles if needle in path.read_bytes()]
    assert not found, found
    grub_cfg = (tree / "boot" / "grub" / "grub.cfg").read_text()
    assert "multiboot2 /switchyard.elf" in grub_cfg or mode == "proxy"
    assert "kernel tftp://${next-server}/switchyard32.elf" in (tree / "boot.ipxe").read_text()


def test_the_copied_kernels_keep_every_loaded_segment(trees):
    """The kernels lose only their debug sections: each PT_LOAD segment's bytes are the
    build's own."""
    for name in ("switchyard.elf", "switchyard32.elf"):
        built, copied = delivery.BUILD / name, trees["dhcp"] / "tftp" / name
        assert load_segments(copied) == load_segments(built), name
        assert copied.stat().st_size < built.stat().st_size, name


def load_segments(path):
    """[(vaddr, bytes)] of an ELF file's PT_LOAD segments, by readelf."""
    out = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True,
                         check=True).stdout
    data = path.read_bytes()
    segments = []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == "LOAD":
            offset, vaddr, size = int(words[1], 16), int(words[2], 16), int(words[4], 16)
            segments.append((vaddr, data[offset:offset + size]))
    assert segments, out
    return segments


def test_a_tree_copied_elsewhere_is_served_from_the_tftp_root_given(tmp_path):
    conf = (mkpxe(tmp_path / "pxe", "--tftp-root", "/srv/tftp") / "dnsmasq.conf").read_text()
    assert "\ntftp-root=/srv/tftp\n" in conf
    proc = subprocess.run([sys.executable, str(MKPXE), "--tftp-root", "srv/tftp", "--out",
                           str(tmp_path / "x")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "give an absolute path" in proc.stderr, proc.stderr


@pytest.mark.parametrize("mode", ["dhcp", "proxy"])
def test_dnsmasq_accepts_the_configuration(trees, mode):
    conf = trees[mode] / "dnsmasq.conf"
    proc = subprocess.run(["dnsmasq", "--test", f"--conf-file={conf}"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0 and "syntax check OK" in proc.stderr, proc.stderr
    text = conf.read_text()
    assert "\ninterface=server\n" in text
    if mode == "dhcp":
        assert f"\ndhcp-range={RANGE}\n" in text
        # An empty option: dnsmasq(8) sends no router (it would name itself).
        assert "\ndhcp-option=option:router\n" in text
    else:
        assert f"\ndhcp-range={SUBNET},proxy\n" in text
        assert "dhcp-boot" not in text  # a proxy offers its boot menu (pxe-service) only


@pytest.mark.parametrize("args, message", [
    (["--proxy-dhcp", "10.0.0"], "give the subnet's IPv4 address"),
    (["--interface", "eth1\nport=53"], "not a dnsmasq.conf value"),
    (["--dhcp-range", "1.2.3.4 5"], "not a dnsmasq.conf value"),
    (["--proxy-dhcp", SUBNET, "--dhcp-range", RANGE], "not allowed with argument"),
])
def test_mkpxe_refuses_values_dnsmasq_would_misread(tmp_path, args, message):
    proc = subprocess.run([sys.executable, str(MKPXE), *args, "--out", str(tmp_path / "pxe")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "pxe").exists()


def discover(namespace, pxe):
    """The replies to one DHCPDISCOVER from the namespace's client interface."""
    proc = subprocess.run(["ip", "netns", "exec", namespace, sys.executable,
                           str(Path(delivery.__file__)), "dhcp-discover", "client",
                           "pxe" if pxe else "plain", "1.5"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(NETNS_REASON is not None, reason=str(NETNS_REASON))
@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["dhcp", "proxy"])
def test_dnsmasq_offers_no_router_and_a_proxy_leases_nothing(trees, tmp_path, mode):
    """mkpxe's dnsmasq.conf as it is, on a veth in a namespace, answers a DHCPDISCOVER from the
    peer namespace. DHCP: every client gets an address and a boot file, and never a router or
    DNS server. Proxy-DHCP: only PXE clients get an answer, the boot menu without an address."""
    with delivery.veth_namespaces(f"switchyard-dhcp-{os.getpid()}", SERVER_ADDRESS) as (
            server, client):
        dnsmasq = subprocess.Popen(
            ["ip", "netns", "exec", server, "dnsmasq", f"--conf-file={trees[mode]}/dnsmasq.conf",
             "--keep-in-foreground", "--user=root", "--group=root", "--no-ping",
             f"--pid-file={tmp_path / 'dnsmasq.pid'}",
             f"--dhcp-leasefile={tmp_path / 'dnsmasq.leases'}",
             f"--log-facility={tmp_path / 'dnsmasq.log'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
        try:
            time.sleep(0.3)
            assert dnsmasq.poll() is None, f"dnsmasq exited: {dnsmasq.stderr.read().decode()}"
            replies = {kind: discover(client, kind == "pxe") for kind in ("pxe", "plain")}
        finally:
            delivery.kill_group(dnsmasq)
    log = (tmp_path / "dnsmasq.log").read_text()
    print(json.dumps(replies))
    if mode == "dhcp":
        for kind, offers in replies.items():
            assert len(offers) == 1, (kind, offers, log)
            options = offers[0]["options"]
            assert offers[0]["yiaddr"].startswith("10.77.1."), offers
            assert DHCP_ROUTER not in options and DHCP_DNS not in options, (offers, log)
            assert bytes.fromhex(options["67"]).rstrip(b"\0") == b"boot/grub/i386-pc/core.0"
    else:
        assert replies["plain"] == [], replies  # the lab's own server answers those
        assert len(replies["pxe"]) == 1, (replies, log)
        offer = replies["pxe"][0]
        assert offer["yiaddr"] == "0.0.0.0", offer
        assert DHCP_ROUTER not in offer["options"] and DHCP_DNS not in offer["options"], offer
        # The PXE boot menu (RFC 4578's vendor options) offers GRUB to this BIOS client.
        assert b"switchyard (GRUB)" in bytes.fromhex(offer["options"][DHCP_VENDOR]), offer


def make_pxe_line(*variables):
    """scripts/mkpxe's argv as `make -n pxe` prints it, with these make variables."""
    proc = subprocess.run(["make", "-n", "--no-print-directory", "pxe", *variables], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    commands = proc.stdout.replace("\\\n", " ").splitlines()
    lines = [line for line in commands if "scripts/mkpxe" in line]
    assert len(lines) == 1, proc.stdout
    argv = shlex.split(lines[0])
    return argv[argv.index("scripts/mkpxe") + 1:]


def test_make_pxe_passes_its_variables_to_mkpxe(tmp_path):
    argv = make_pxe_line(f"BUILD={tmp_path}", "CONSOLE=0x2f8,57600", "CMDLINE=tests=dr.* seed=3",
                         "PXE_INTERFACE=enp3s0", "PXE_DHCP_RANGE=10.1.0.10,10.1.0.20,2h",
                         "PXE_TFTP_ROOT=/srv/tftp", "PXE_LAVA=1")
    assert argv == ["--console", "0x2f8,57600", "--cmdline", "tests=dr.* seed=3",
                    "--out", f"{tmp_path}/pxe", "--interface", "enp3s0",
                    "--dhcp-range", "10.1.0.10,10.1.0.20,2h", "--tftp-root", "/srv/tftp", "--lava"]
    assert make_pxe_line("PXE_PROXY_DHCP=10.1.0.0")[-2:] == ["--proxy-dhcp", "10.1.0.0"]
    # Unset, mkpxe's own defaults apply.
    assert make_pxe_line() == ["--console", "ttyS0", "--cmdline", "", "--out", "build/pxe"]


def test_make_pxe_variables_reach_the_tree(tmp_path):
    """The printed command run as it is (into tmp_path): the console in grub.cfg and
    boot.ipxe, the interface and proxy subnet in dnsmasq.conf."""
    argv = make_pxe_line(f"BUILD={tmp_path}", "CONSOLE=ttyS1", "CMDLINE=tests=dr.*",
                         "PXE_INTERFACE=enp3s0", "PXE_PROXY_DHCP=10.1.0.0")
    proc = subprocess.run([sys.executable, str(MKPXE), *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "pxe"
    conf = (out / "dnsmasq.conf").read_text()
    assert "\ninterface=enp3s0\n" in conf and "\ndhcp-range=10.1.0.0,proxy\n" in conf
    assert "serial --unit=1 --speed=115200" in (out / "tftp/boot/grub/grub.cfg").read_text()
    assert "multiboot2 /switchyard.elf 'tests=dr.*' 'console=ttyS1'" in \
        (out / "tftp/boot/grub/grub.cfg").read_text()
    assert (out / "tftp/boot.ipxe").read_text().endswith(
        "switchyard32.elf tests=dr.* console=ttyS1\nboot\n")


def test_mkpxe_lava_leaves_grub_at_its_prompt_on_the_serial_port(tmp_path):
    grub_cfg = (mkpxe(tmp_path / "pxe", "--lava", "--console", "0x2f8") /
                "tftp/boot/grub/grub.cfg").read_text()
    commands = [line for line in grub_cfg.splitlines() if line and not line.startswith("#")]
    assert commands == ["serial --port=0x2f8 --speed=115200", "terminal_input serial",
                        "terminal_output serial"]


# LAVA's grub boot method on the x86 type: the device type of deploy/lava.

LAVA_QEMU = lava_qemu
LAVA_OUT = delivery.BUILD / "lava"


@pytest.fixture(scope="module")
def device_types(tmp_path_factory):
    """lava-server's device-type templates with deploy/lava's beside them (lavacli resolves
    {% extends %} in one directory); skipped without lavacli or the templates."""
    if shutil.which("lavacli") is None:
        pytest.skip("lavacli is not installed (make deps LAVA=1)")
    try:
        stock = LAVA_QEMU.device_types(LAVA_OUT.resolve(), None)
    except SystemExit as error:
        pytest.skip(f"no lava-server device types: {error}")
    types = tmp_path_factory.mktemp("device-types")
    shutil.copytree(stock, types, dirs_exist_ok=True)
    for template in LAVA_DIR.glob("*.jinja2"):
        shutil.copyfile(template, types / template.name)
    return types


def render(types, name):
    proc = subprocess.run(["lavacli", "utils", "templates", "render", "--path", str(types),
                           "--trim", str(types / name)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return yaml.safe_load(proc.stdout)


def test_the_x86_grub_type_adds_grub_to_the_stock_x86_type(device_types):
    """x86.jinja2 has no grub method; x86-grub.jinja2 has x86's methods and grub, at GRUB's
    prompt without an interrupt (mkpxe --lava), or with one where the dictionary asks."""
    stock = render(device_types, "x86.jinja2")["actions"]["boot"]["methods"]
    assert "grub" not in stock
    device = render(device_types, "x86-grub.jinja2")
    methods = device["actions"]["boot"]["methods"]
    assert set(methods) == set(stock) | {"grub"} and methods["ipxe"] == stock["ipxe"]
    assert methods["grub"] == {"parameters": {"bootloader_prompt": "grub>",
                                              "needs_interrupt": False}}
    (device_types / "menu.jinja2").write_text("{% extends 'x86-grub.jinja2' %}\n"
                                              "{% set grub_needs_interrupt = True %}\n")
    menu = render(device_types, "menu.jinja2")
    assert menu["actions"]["boot"]["methods"]["grub"]["parameters"]["needs_interrupt"] is True
    assert menu["constants"]["grub"]["interrupt-prompt"] == "for a command-line"


def test_the_example_lab_dictionary_renders_ipmi_power_and_sol(device_types):
    """deploy/lava/lab-board.jinja2, docs/lab.md's dictionary: ipmitool for power and the
    serial-over-LAN console, on the x86-grub type."""
    device = render(device_types, "lab-board.jinja2")
    commands = device["commands"]
    bmc = ("ipmitool -I lanplus -H board1-bmc.lab.example -U lava -f "
           "/etc/lava-dispatcher/ipmi/board1.pass ")

    def ipmi(command):
        return command[len(bmc):] if command.startswith(bmc) else command

    assert [ipmi(c) for c in commands["power_on"]] == ["chassis bootdev pxe", "chassis power on"]
    assert ipmi(commands["power_off"]) == "chassis power off"
    assert [ipmi(c) for c in commands["hard_reset"]] == [
        "chassis power off", "chassis bootdev pxe", "sleep 10", "chassis power on"]
    assert commands["connect"] == f"sh -c '{bmc}sol deactivate; exec {bmc}sol activate'"
    assert "grub" in device["actions"]["boot"]["methods"]
    assert "console=ttyS1,115200n8" in str(device["actions"]["boot"]["methods"]["ipxe"])


def test_the_grub_template_names_the_x86_grub_type():
    job = yaml.safe_load(GRUB_JOB.read_text())
    assert job["device_type"] == "x86-grub"
