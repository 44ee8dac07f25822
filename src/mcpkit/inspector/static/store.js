// What the page knows across tabs: the target and the tasks started here.
export const store = {
  target: "",
  state: null,
  tasks: new Map(),
  onTasks: () => {},
  addTask(task) {
    this.tasks.set(task.taskId, task);
    this.onTasks();
  },
};
