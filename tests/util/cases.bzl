"""onnxrun_cases_test: a package's cases/ folder (ONNX test layout: model folders with test_data_set_N)
as the filegroup `cases`, and an sh_test that runs `onnxrun test` over it on the CPU
(tests/util/onnxrun_cases_test.sh: every case passes, `models` models found)."""

def onnxrun_cases_test(name, models, cases_visibility = None):
    native.filegroup(
        name = "cases",
        srcs = native.glob(["cases/**"]),
        visibility = cases_visibility,
    )
    native.sh_test(
        name = name,
        size = "small",
        srcs = ["//tests/util:onnxrun_cases_test.sh"],
        args = [
            "$(location //cli:onnxrun)",
            native.package_name() + "/cases",
            str(models),
        ],
        data = [
            ":cases",
            "//cli:onnxrun",
        ],
    )
