// todo_script.ts list: the tasks of the crew's _data folder, one a line.
import fs from 'node:fs'
import path from 'node:path'

interface Task {
	id: number
	description: string
	completed: boolean
}

const file: string = path.resolve(__dirname, '../_data/tasks.json')
const tasks: Task[] = JSON.parse(fs.readFileSync(file, 'utf8'))

if (process.argv[2] !== 'list') {
	console.error('usage: todo_script.ts list')
	process.exit(2)
}
for (const t of tasks)
	console.log(`${t.id} ${t.completed ? '[x]' : '[ ]'} ${t.description}`)
