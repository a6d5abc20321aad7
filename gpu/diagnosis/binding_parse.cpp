// The address parse of torch 2.9.1's Inductor C++ kernel binding (torch/_inductor/codecache.py,
// CppPythonBindingsCodeCache.suffix_template, PyInit_kernel), as a module of its own: it reads
// _TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR with std::istringstream, as that template does, and says whether the parse
// worked. Built by gpu/inductor_cpu_diagnosis.py with the compiler Inductor uses, loaded at each stage of a process.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cstdint>
#include <cstdlib>
#include <locale>
#include <sstream>

static PyObject* parse_py(PyObject*, PyObject*) {
    const char* text = std::getenv("_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR");
    if (!text) Py_RETURN_NONE;
    std::istringstream iss(text);
    uintptr_t addr = 0;
    iss >> addr;
    std::istringstream classic(text);
    classic.imbue(std::locale::classic());
    uintptr_t classic_addr = 0;
    classic >> classic_addr;
    return Py_BuildValue("{s:s,s:K,s:i,s:i,s:K,s:s}", "text", text, "addr", (unsigned long long)addr, "fail",
                         (int)iss.fail(), "bad", (int)iss.bad(), "addr_classic_imbued",
                         (unsigned long long)classic_addr, "cxx_global_locale", std::locale().name().c_str());
}

static PyMethodDef methods[] = {{"parse", parse_py, METH_NOARGS, ""}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "binding_parse", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_binding_parse(void) { return PyModule_Create(&module_def); }
